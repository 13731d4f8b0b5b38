"""A bounded load test: 64 concurrent streaming clients (the official openai
client) against `nextok serve` on loopback for NEXTOK_LOAD_SECONDS (default
60). Expects no errors, every stream finished, and stable RSS; prints the
time-to-first-token percentiles and throughput as JSON. Then the aggregate
decode throughput with 1 and with 8 concurrent clients, NEXTOK_THROUGHPUT_SECONDS
(default 20) each."""
import json
import os
import statistics
import threading
import time

import openai

from server_util import Server, wait_idle

CLIENTS = 64
SECONDS = float(os.environ.get("NEXTOK_LOAD_SECONDS", "60"))
THROUGHPUT_SECONDS = float(os.environ.get("NEXTOK_THROUGHPUT_SECONDS", "20"))
# Against the ASan+UBSan server (scripts/test.sh) freed memory waits in the
# quarantine, so RSS gets a loose bound there; the release run keeps 32 MiB.
# What the sanitized run adds: any leak fails the server's exit code, any
# memory error aborts it.
RSS_GROWTH_MIB = 512 if os.environ.get("NEXTOK_SANITIZED") == "1" else 32
MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Name one colour."}]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


def run_clients(server, n_clients, seconds, max_tokens):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=600)
    ttft, errors, done, tokens = [], [], [0], [0]
    lock = threading.Lock()
    deadline = time.time() + seconds

    def worker(i):
        k = 0
        while time.time() < deadline:
            k += 1
            t0 = time.time()
            first = None
            finish = None
            try:
                stream = client.chat.completions.create(
                    model="default", messages=MESSAGES, max_tokens=max_tokens, temperature=0.7,
                    seed=i * 1000 + k, stream=True, stream_options={"include_usage": True})
                usage = None
                for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content and first is None:
                        first = time.time() - t0
                    if chunk.choices and chunk.choices[0].finish_reason:
                        finish = chunk.choices[0].finish_reason
                    if chunk.usage:
                        usage = chunk.usage
                if finish is None or usage is None:
                    raise AssertionError("stream ended without finish_reason and usage")
                with lock:
                    done[0] += 1
                    tokens[0] += usage.completion_tokens
                    if first is not None:
                        ttft.append(first)
            except Exception as e:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(repr(e))

    t_start = time.time()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    rss = []
    while any(t.is_alive() for t in threads):
        rss.append(server.rss_kib())
        time.sleep(1.0)
    for t in threads:
        t.join()
    wall = time.time() - t_start
    client.close()
    return dict(ttft=ttft, errors=errors, requests=done[0], tokens=tokens[0], wall=wall, rss=rss)


def test_64_streaming_clients(cli):
    server = Server(cli)
    try:
        # Warm up at full concurrency (page in the weights, every slot's KV
        # cache, every connection's and thread's first allocations) before
        # measuring RSS: what must stay flat is the steady state.
        run_clients(server, CLIENTS, 3, 8)
        wait_idle(server)
        rss0 = server.rss_kib()
        r = run_clients(server, CLIENTS, SECONDS, 16)
        conns = wait_idle(server)["connections"]
        rss1 = server.rss_kib()
        print(json.dumps({
            "bench": "server_load", "clients": CLIENTS, "seconds": SECONDS,
            "requests": r["requests"], "errors": len(r["errors"]),
            "completion_tokens": r["tokens"], "wall_s": round(r["wall"], 1),
            "tokens_per_s": round(r["tokens"] / r["wall"], 1),
            "ttft_p50_s": round(pct(r["ttft"], 0.5), 3), "ttft_p99_s": round(pct(r["ttft"], 0.99), 3),
            "rss_start_mib": round(rss0 / 1024, 1), "rss_peak_mib": round(max(r["rss"]) / 1024, 1),
            "rss_end_mib": round(rss1 / 1024, 1),
            "waited_past_caps": conns["waited"], "turned_away": conns["turned_away"]}))
        assert not r["errors"], r["errors"][:5]
        assert r["requests"] >= CLIENTS  # every client was served at least once
        assert rss1 - rss0 < RSS_GROWTH_MIB * 1024, f"RSS grew from {rss0} KiB to {rss1} KiB"
    finally:
        assert server.stop() == 0


def test_throughput_1_vs_8_clients(cli):
    server = Server(cli)
    try:
        run_clients(server, 2, 2, 8)
        wait_idle(server)
        rows = []
        for n in (1, 8):
            r = run_clients(server, n, THROUGHPUT_SECONDS, 64)
            wait_idle(server)
            assert not r["errors"], r["errors"][:5]
            rows.append({"bench": "server_throughput", "clients": n, "requests": r["requests"],
                         "completion_tokens": r["tokens"],
                         "tokens_per_s": round(r["tokens"] / r["wall"], 1),
                         "ttft_p50_s": round(statistics.median(r["ttft"]), 3)})
        for row in rows:
            print(json.dumps(row))
        print(json.dumps({"bench": "server_throughput_ratio", "ratio_8_vs_1":
                          round(rows[1]["tokens_per_s"] / rows[0]["tokens_per_s"], 2)}))
    finally:
        assert server.stop() == 0
