"""Anchors for `nextok bench host`: llama.cpp's sampler chain (llama-cpp-python,
low-level llama_sampler_* API on a llama_token_data_array, no model) and
mlx-lm's processors + sampler on the CPU, timed on the same logits files and
configs that nextok just ran. Prints one JSON line per (config, vocab, dtype,
impl); a missing package is reported as a JSON warning line, not a crash."""
import ctypes
import json
import statistics
import sys
import time

import numpy as np


def timings(fn, budget_s, max_iters):
    for _ in range(3):
        fn()
    out = []
    start = time.perf_counter()
    while len(out) < max_iters and (len(out) < 5 or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1000.0)
    out.sort()
    return statistics.median(out), out[min(len(out) - 1, int(0.99 * len(out)))], len(out)


def bf16_round(x):
    u = x.view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def llama_cpp_runner(case, logits):
    import llama_cpp as L

    vocab = len(logits)
    chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
    add = lambda s: L.llama_sampler_chain_add(chain, s)
    if case["config"] == "greedy":
        add(L.llama_sampler_init_greedy())
    else:
        if case["logit_bias"]:
            arr = (L.llama_logit_bias * len(case["logit_bias"]))(
                *[L.llama_logit_bias(int(i), float(b)) for i, b in case["logit_bias"]])
            add(L.llama_sampler_init_logit_bias(vocab, len(case["logit_bias"]), arr))
        if case["repetition_penalty"] != 1 or case["presence_penalty"] or case["frequency_penalty"]:
            add(L.llama_sampler_init_penalties(vocab, 20, case["repetition_penalty"],
                                               case["frequency_penalty"], case["presence_penalty"]))
        if case["top_k"] > 0:
            add(L.llama_sampler_init_top_k(case["top_k"]))
        if 0 < case["top_p"] < 1:
            add(L.llama_sampler_init_top_p(case["top_p"], 1))
        if case["min_p"] > 0:
            add(L.llama_sampler_init_min_p(case["min_p"], 1))
        add(L.llama_sampler_init_temp(case["temperature"]))
        add(L.llama_sampler_init_dist(1234))
    for t in case["history"]:  # fills the penalties sampler's window
        L.llama_sampler_accept(chain, t)

    dt = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
    template = np.zeros(vocab, dtype=dt)
    template["id"] = np.arange(vocab, dtype=np.int32)
    template["logit"] = logits
    work = np.zeros_like(template)
    arr = L.llama_token_data_array(
        data=work.ctypes.data_as(ctypes.POINTER(L.llama_token_data)), size=vocab, selected=-1,
        sorted=False)
    ref = ctypes.byref(arr)

    def step():
        # What llama_sampler_sample does each step: build the candidates, apply the chain.
        np.copyto(work, template)
        arr.size = vocab
        arr.selected = -1
        arr.sorted = False
        L.llama_sampler_apply(chain, ref)
        return work["id"][arr.selected]

    return step


def mlx_runner(case, logits, dtype):
    import mlx.core as mx
    from mlx_lm.sample_utils import make_logits_processors, make_sampler

    mx.set_default_device(mx.cpu)
    x = mx.array(logits[None, :])
    if dtype == "bf16":
        x = x.astype(mx.bfloat16)
    tokens = mx.array(case["history"], dtype=mx.int32)
    bias = {int(i): float(b) for i, b in case["logit_bias"]} or None
    procs = make_logits_processors(
        logit_bias=bias,
        repetition_penalty=case["repetition_penalty"] if case["repetition_penalty"] != 1 else None,
        presence_penalty=case["presence_penalty"] or None,
        frequency_penalty=case["frequency_penalty"] or None)
    sampler = make_sampler(temp=case["temperature"], top_p=case["top_p"], min_p=case["min_p"],
                           top_k=case["top_k"])
    mx.eval(x)

    def step():
        y = x
        for p in procs:
            y = p(tokens, y)
        lp = y - mx.logsumexp(y, axis=-1, keepdims=True)
        t = sampler(lp)
        mx.eval(t)
        return t

    return step


def main():
    cases = json.load(open(sys.argv[1]))
    for case in cases:
        logits = np.load(case["logits"]).reshape(-1).astype(np.float32)
        if case["dtype"] == "bf16":
            logits = bf16_round(logits)
        quick = case.get("quick", False)
        budget, iters = (0.05, 30) if quick else (0.4, 1000)
        for impl, make in (("llama.cpp", lambda: llama_cpp_runner(case, logits)),
                           ("mlx-lm", lambda: mlx_runner(case, logits, case["dtype"]))):
            base = {"bench": "host", "config": case["config"], "vocab": case["vocab"],
                    "dtype": case["dtype"], "impl": impl}
            try:
                med, p99, n = timings(make(), budget, iters)
            except ImportError as e:
                print(json.dumps({**base, "warning": f"anchor not installed: {e}"}), flush=True)
                continue
            print(json.dumps({**base, "median_us": med, "p99_us": p99, "iters": n}), flush=True)


if __name__ == "__main__":
    main()
