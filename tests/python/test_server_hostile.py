"""`nextok serve` under hostile clients, on loopback: slow heads and bodies,
idle sockets, connection floods, clients that leave mid-request (plain and
streamed), schemas that are huge or quadratic to compile, bogus framing and
pipelining. Each attack runs while a normal streamed chat is timed: its first
token must come within BOUND (2 x the idle time + 1 s). Prints the figures as
JSON lines (docs/server.md). Runs from the release build (label model_oracles):
its absolute bounds (slot freed within 1 s, the compile budget + 1.5 s) assume
release-speed decode steps and DFA work; a debug build is ~20x slower.
NEXTOK_TIME_SCALE multiplies them for slower builds (the ASan run in
scripts/test.sh), where what is checked is memory safety under the attacks."""
import json
import os
import socket
import threading
import time

import openai
import pytest

from server_util import Server, chat_ttft, wait_idle

HEADER_TIMEOUT = 3
BODY_TIMEOUT = 3
# Short enough that the 16,000-const oneOf (about 1 s on an idle machine,
# 3 s on a busy one) always exceeds it.
COMPILE_MS = 300
SCALE = float(os.environ.get("NEXTOK_TIME_SCALE", "1"))
# Under ASan freed memory waits in a quarantine (up to 256 MiB) and shadow
# memory adds an eighth, so RSS targets are asserted on the release server;
# the sanitized run keeps a loose bound that still catches a leak.
SANITIZED = os.environ.get("NEXTOK_SANITIZED") == "1"
CHAT = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


@pytest.fixture(scope="module")
def server(cli):
    s = Server(cli, "--parallel", 1, "--header-timeout", HEADER_TIMEOUT, "--body-timeout",
               BODY_TIMEOUT, "--max-compile-ms", COMPILE_MS, "--max-connections", 1000,
               "--max-connections-per-peer", 1000)
    yield s
    assert s.stop() == 0


def health(server):
    return json.loads(server.get("/health"))


def ttft(server):
    """Seconds to the first content token of a short streamed chat."""
    return chat_ttft(openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0,
                                   timeout=60))


@pytest.fixture(scope="module")
def bound(server):
    ttft(server)  # warm up
    idle = sorted(ttft(server) for _ in range(3))[1]
    print(json.dumps({"bench": "hostile", "attack": "none", "ttft_s": round(idle, 3)}))
    return 2 * idle + 1.0 * SCALE


def check_ttft(server, bound, attack):
    t = ttft(server)
    print(json.dumps({"bench": "hostile", "attack": attack, "ttft_s": round(t, 3)}))
    assert t <= bound, f"first token after {t:.2f}s under {attack} (bound {bound:.2f}s)"


def body_request(body, extra=""):
    data = json.dumps(body) if not isinstance(body, (bytes, str)) else body
    data = data.encode() if isinstance(data, str) else data
    return (CHAT + extra + f"Content-Length: {len(data)}\r\n\r\n").encode() + data


def read_response(sock, buf=b""):
    """One HTTP response (Content-Length or chunked) from sock: (status, head, body, rest)."""
    while b"\r\n\r\n" not in buf:
        got = sock.recv(65536)
        if not got:
            raise ConnectionError(f"closed before a response: {buf[:200]!r}")
        buf += got
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(buf) < n:
            got = sock.recv(65536)
            if not got:
                raise ConnectionError("closed mid-body")
            buf += got
        return status, headers, buf[:n], buf[n:]
    body = b""
    while True:  # chunked
        while b"\r\n" not in buf:
            buf += sock.recv(65536)
        size, buf = buf.split(b"\r\n", 1)
        n = int(size, 16)
        while len(buf) < n + 2:
            buf += sock.recv(65536)
        body, buf = body + buf[:n], buf[n + 2:]
        if n == 0:
            return status, headers, body, buf


def send_raw(server, data, timeout=10):
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        s.sendall(data)
        status, _, body, _ = read_response(s)
        return status, json.loads(body) if body else None


def test_slow_headers_do_not_block_others(server, bound):
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(200)]
    stop = threading.Event()

    def drip():  # one byte per socket per second: each byte is "on time"
        i = 0
        while not stop.is_set():
            for s in socks:
                try:
                    s.send(CHAT[i % len(CHAT)].encode())
                except OSError:
                    pass
            i += 1
            stop.wait(1.0)

    t = threading.Thread(target=drip)
    t.start()
    try:
        time.sleep(1.0)
        t0 = time.time()
        h = health(server)
        assert time.time() - t0 < 1.0 * SCALE and h["connections"]["open"] >= 200
        check_ttft(server, bound, "200 slow-header sockets")
        # The whole head has a deadline: every socket hears 408 and is closed.
        for s in socks:
            s.settimeout(HEADER_TIMEOUT + 3)
            status, _, body, _ = read_response(s)
            assert status == 408 and b"header timeout" in body
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    assert health(server)["connections"]["timed_out"] >= 200


def test_slow_body_times_out(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=BODY_TIMEOUT + 5) as s:
        s.sendall((CHAT + "Content-Length: 100\r\n\r\n{").encode())
        t0 = time.time()
        status, _, body, _ = read_response(s)
        assert status == 408 and b"body timeout" in body
        assert time.time() - t0 < BODY_TIMEOUT + 2 * SCALE


def test_idle_connections(server, bound):
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(300)]
    try:
        time.sleep(0.5)
        check_ttft(server, bound, "300 idle sockets")
        socks[-1].settimeout(HEADER_TIMEOUT + 3)
        assert socks[-1].recv(1) == b""  # closed by the server at the header deadline
    finally:
        for s in socks:
            s.close()


def test_connection_caps_keep_health_answering(cli):
    s = Server(cli, "--max-connections", 8, "--max-connections-per-peer", 4)
    held = []
    try:
        held = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(4)]
        time.sleep(0.3)
        # Over the per-peer cap: /health is still served from the reserve ...
        assert health(s)["status"] == "ok"
        # ... but a generation waits at most a moment for room, then hears 503:
        # it is not queued behind the cap.
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
        t0 = time.time()
        status, err = send_raw(s, body_request(body))
        assert status == 503 and err["error"]["code"] == "too_many_connections"
        assert time.time() - t0 < 5 * SCALE
        # A request past the cap goes ahead once the peer is back under it
        # within that moment: a client's previous connection may be let go
        # just after its next one was accepted and its request sent.
        late = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        late.sendall(body_request(body))
        time.sleep(0.5)
        held.pop().close()
        assert read_response(late)[0] == 200
        late.close()
        held.append(socket.create_connection(("127.0.0.1", s.port)))
        time.sleep(0.3)
        # Past the reserve too: refused at accept, with an answer.
        held += [socket.create_connection(("127.0.0.1", s.port)) for _ in range(16)]
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as extra:
            assert read_response(extra)[0] == 503
    finally:
        for h in held:
            h.close()
        assert s.stop() == 0


@pytest.mark.parametrize("stream", [False, True])
def test_disconnect_frees_the_slot(server, bound, stream):
    wait_idle(server)
    before = health(server)
    # Long enough (EOS banned) that no machine finishes it before the hang-up:
    # a fast one did 2,000 tokens within 1 s. The hang-up follows its start.
    body = {"messages": [{"role": "user", "content": "Count from 1 to 5000."}], "max_tokens": 8000,
            "temperature": 0, "stream": stream, "ignore_eos": True}
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(body_request(body))
    if stream:
        got = b""
        while got.count(b"data: ") < 3:
            got += s.recv(4096)
    else:
        t0 = time.time()
        while health(server)["running"] != 1:
            assert time.time() - t0 < 10 * SCALE, "the request never started"
            time.sleep(0.01)
        time.sleep(0.1)
        assert health(server)["running"] == 1, "the request ended before the hang-up"
    s.close()
    t0 = time.time()
    while health(server)["running"]:
        assert time.time() - t0 < 1.0 * SCALE, "the slot was not freed within 1 s of the hang-up"
        time.sleep(0.01)
    freed = time.time() - t0
    print(json.dumps({"bench": "hostile", "attack": f"disconnect stream={stream}",
                      "slot_freed_s": round(freed, 3)}))
    assert health(server)["connections"]["disconnects"] > before["connections"]["disconnects"]
    check_ttft(server, bound, f"after a disconnect (stream={stream})")  # --parallel 1: slot free


def quadratic_schema(n=16000):  # ~3 s to compile without a budget
    return {"oneOf": [{"const": f"s{i}"} for i in range(n)]}


def schema_request(schema, max_tokens=1):
    return {"messages": [{"role": "user", "content": "JSON"}], "max_tokens": max_tokens,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "x", "schema": schema}}}


def test_oneof_4000_consts_answered_within_budget(server):
    t0 = time.time()
    status, _ = send_raw(server, body_request(schema_request(quadratic_schema(4000))), timeout=30)
    took = time.time() - t0
    print(json.dumps({"bench": "hostile", "attack": "oneOf x 4000 const", "status": status,
                      "answered_s": round(took, 3)}))
    assert status in (200, 400) and took < COMPILE_MS / 1000 + 1.5 * SCALE


def test_quadratic_schema_is_400_naming_the_budget(server, bound):
    result = {}

    def attack():
        t0 = time.time()
        result["status"], result["body"] = send_raw(server, body_request(schema_request(
            quadratic_schema())), timeout=30)
        result["s"] = time.time() - t0

    t = threading.Thread(target=attack)
    t.start()
    time.sleep(0.2)
    check_ttft(server, bound, "quadratic oneOf schema compiling")
    t.join()
    print(json.dumps({"bench": "hostile", "attack": "quadratic schema",
                      "answered_s": round(result["s"], 3), "status": result["status"]}))
    assert result["status"] == 400
    assert f"max_compile_ms = {COMPILE_MS}" in result["body"]["error"]["message"]
    assert result["s"] < COMPILE_MS / 1000 + 1.5 * SCALE


def test_overlapping_integer_ranges_stay_within_budget(server):
    """A oneOf of 1,000 overlapping ranges: a union of 1,000 DFAs, checked per state."""
    schema = {"oneOf": [{"type": "integer", "minimum": i, "maximum": i + 1000} for i in range(1000)]}
    t0 = time.time()
    status, body = send_raw(server, body_request(schema_request(schema)), timeout=30)
    took = time.time() - t0
    print(json.dumps({"bench": "hostile", "attack": "oneOf x 1000 integer ranges",
                      "status": status, "answered_s": round(took, 3)}))
    assert status == 400 and "max_compile_ms" in body["error"]["message"]
    assert took < COMPILE_MS / 1000 + 1.0 * SCALE


def test_compile_is_cancelled_on_disconnect(cli):
    # A budget far longer than the compile, so only the hang-up can end it.
    server = Server(cli, "--parallel", 1, "--max-compile-ms", 60000)
    try:
        compile_cancel(server)
    finally:
        assert server.stop() == 0


def compile_cancel(server):
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(body_request(schema_request(quadratic_schema(30000))))
    t0 = time.time()
    while health(server)["compiling"] == 0:
        assert time.time() - t0 < 2 * SCALE
        time.sleep(0.01)
    time.sleep(0.2)
    s.close()
    t1 = time.time()
    while health(server)["compiling"]:
        time.sleep(0.005)
    latency = time.time() - t1
    print(json.dumps({"bench": "hostile", "attack": "compile cancel",
                      "cancel_latency_ms": round(latency * 1000, 1)}))
    # The compile alone takes seconds more.
    assert latency < 0.25 * SCALE


def test_huge_enum_schemas_memory_is_returned(server, bound):
    wait_idle(server)
    rss0 = health(server)["memory"]["rss_bytes"]
    results = []

    def attack(k):
        values = [f"value-{k}-{i:07d}" for i in range(100000)]  # ~2.2 MB
        results.append(send_raw(server, body_request(schema_request({"enum": values})),
                                timeout=120)[0])

    threads = [threading.Thread(target=attack, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    check_ttft(server, bound, "16 concurrent 2.2 MB enum schemas")
    for t in threads:
        t.join()
    wait_idle(server)
    h = health(server)
    rss1, peak = h["memory"]["rss_bytes"], h["memory"]["peak_rss_bytes"]
    print(json.dumps({"bench": "hostile", "attack": "16 x 2.2 MB enum schemas",
                      "statuses": sorted(set(results)), "rss_before_mib": rss0 >> 20,
                      "rss_after_mib": rss1 >> 20, "peak_rss_mib": peak >> 20}))
    assert len(results) == 16 and all(r in (200, 400) for r in results), results
    check_memory(rss0, rss1, peak)


def check_memory(rss0, rss1, peak):
    """The issue's targets: peak <= 1 GiB, RSS back within 20% of its start."""
    if SANITIZED:
        assert rss1 - rss0 < 512 << 20, f"RSS {rss0 >> 20} -> {rss1 >> 20} MiB"
        return
    assert peak <= 1 << 30, f"peak RSS {peak >> 20} MiB"
    assert rss1 <= rss0 * 1.2, f"RSS {rss0 >> 20} -> {rss1 >> 20} MiB"


def memory_hungry_schema(k, patterns=6):
    """Patterns whose DFAs need 2^13 states each (8 MiB of table): the 13th
    byte from the end is an a. Letters differ per request, so nothing is shared."""
    letters = "bcdefghijklmnopqrstuvwxyz"
    def wide(i):
        b = letters[(k * patterns + i) % len(letters)]
        return f"^(a|{b})*a(a|{b}){{12}}{k}$"
    return {"type": "object", "properties": {f"p{i}": {"type": "string", "pattern": wide(i)}
                                             for i in range(patterns)}}


def test_compile_memory_budget_bounds_rss(cli):
    """16 concurrent schemas that each need more than --max-compile-mb: 400s
    naming max_compile_bytes, peak RSS <= 1 GiB, RSS back within 20% after."""
    budget_mib = 32
    server = Server(cli, "--parallel", 1, "--max-compile-mb", budget_mib, "--max-compile-ms",
                    30000)
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0,
                               timeout=60)
        chat_ttft(client)  # warm: the model's pages and the first request's state
        rss0 = health(server)["memory"]["rss_bytes"]
        results = []

        def attack(k):
            results.append(send_raw(server, body_request(schema_request(
                memory_hungry_schema(k))), timeout=120))

        threads = [threading.Thread(target=attack, args=(k,)) for k in range(16)]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.time() - t0
        wait_idle(server)
        h = health(server)
        rss1, peak = h["memory"]["rss_bytes"], h["memory"]["peak_rss_bytes"]
        print(json.dumps({"bench": "hostile", "attack": "16 x schemas past --max-compile-mb 32",
                          "statuses": sorted({r[0] for r in results}), "answered_s": round(took, 2),
                          "rss_before_mib": rss0 >> 20, "rss_after_mib": rss1 >> 20,
                          "peak_rss_mib": peak >> 20}))
        assert len(results) == 16
        for status, body in results:
            assert status == 400, body
            assert f"max_compile_bytes = {budget_mib << 20}" in body["error"]["message"], body
        check_memory(rss0, rss1, peak)
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("headers,status", [
    ("Content-Length: -1\r\n", 400),
    ("Content-Length: 1e30\r\n", 400),
    ("Content-Length: abc\r\n", 400),
    ("Content-Length: 2\r\nContent-Length: 2\r\n", 400),
    ("Content-Length: 2\r\nContent-Length: 3\r\n", 400),
    ("Content-Length: 1000000000000\r\n", 413),
    ("Content-Length: 123456789012345678901234567890\r\n", 413),
    ("Transfer-Encoding: chunked\r\n", 501),
    ("", 411),
])
def test_bogus_content_length_is_refused_at_once(server, headers, status):
    t0 = time.time()
    got, body = send_raw(server, (CHAT + headers + "\r\n").encode())
    assert got == status and body["error"]["message"]
    assert time.time() - t0 < 1.0 * SCALE


def test_pipelined_requests_are_answered_in_order(server):
    chat = body_request({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
                         "temperature": 0})
    get = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    models = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(get + chat + models + chat + get)
        rest, kinds = b"", []
        for _ in range(5):
            status, _, body, rest = read_response(s, rest)
            assert status == 200
            kinds.append(json.loads(body).get("object", "health"))
    assert kinds == ["health", "chat.completion", "list", "chat.completion", "health"]


BAD_BODIES = [
    b"\xff\xfe garbage",
    b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}',
    b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1e400}',
    b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 99999999999999999999999}',
    b'{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
    b'{"messages": [{"role": "user", "content": {"a": 1}}]}',
    b'{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}',
    b'{"messages": []}',
    b'{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema",'
    b' "json_schema": {"schema": {"$ref": "#/nowhere"}}}}',
    b'{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema",'
    b' "json_schema": {"schema": {"type": "string", "pattern": "(((("}}}}',
    b'{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema",'
    b' "json_schema": {"schema": {"type": "string", "pattern": "(a|aa)*{99999}"}}}}',
    b'{"messages": [{"role": "user", "content": "hi"}], "logit_bias": {"1": 1e308}}',
    b'{"messages": [{"role": "user", "content": "hi"}], "stop": ["' + b"x" * 5000 + b'"]}',
    b'{"messages": [{"role": "user", "content": "' + b"word " * 20000 + b'"}]}',
    b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 100000000}',
    b'{"messages": [{"role": "user", "content": "hi"}], "thinking_budget": 5}',
    b'{"messages": [{"role": "function", "content": "hi"}]}',
    b'{"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}',
    b'{"model": 5, "messages": [{"role": "user", "content": "hi"}]}',
    b'{"messages": [{"role": "user", "content": "hi"}]' + b"]" * 10,
    b"{" * 300,
]


@pytest.mark.parametrize("i", range(len(BAD_BODIES)))
def test_known_bad_inputs_are_4xx(server, i):
    status, body = send_raw(server, body_request(BAD_BODIES[i]), timeout=30)
    assert 400 <= status < 500, (status, body)
    assert body["error"]["message"] and body["error"]["type"] == "invalid_request_error"
