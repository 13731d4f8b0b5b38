"""llama.cpp side of `nextok bench decode`: the same GGUF, prompt tokens,
token count and threads through llama-cpp-python; greedy, EOS ignored.
Prints one JSON line (prefill and decode tokens/s, medians) plus the ratios."""
import argparse
import json
import os
import statistics
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt-ids", required=True)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--nextok-tokens-per-s", type=float, default=0.0)
    ap.add_argument("--nextok-prefill-tokens-per-s", type=float, default=0.0)
    a = ap.parse_args()
    import llama_cpp

    threads = a.threads or os.cpu_count()
    prompt = [int(x) for x in a.prompt_ids.split(",")]
    n_ctx = len(prompt) + a.tokens + 8
    # n_batch = n_ctx: llama-cpp-python keeps one logits row per batch slot,
    # and the decode steps after a long prompt write past a smaller batch.
    # llama.cpp still computes in ubatches of 512 (its default).
    llm = llama_cpp.Llama(model_path=a.model, n_ctx=n_ctx, n_threads=threads,
                          n_threads_batch=threads, n_batch=n_ctx, flash_attn=False, verbose=False)
    rates, prefill = [], []
    for _ in range(max(1, a.repeats)):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        prefill.append(len(prompt) / (time.perf_counter() - t0))
        # As nextok counts it: the first token comes from the prefill logits,
        # then tokens - 1 steps, each followed by a greedy pick on the host.
        t0 = time.perf_counter()
        tok = int(llm.scores[llm.n_tokens - 1].argmax())
        for _ in range(a.tokens - 1):
            llm.eval([tok])
            tok = int(llm.scores[llm.n_tokens - 1].argmax())
        rates.append(a.tokens / (time.perf_counter() - t0))
    tps = statistics.median(rates)
    print(json.dumps({"bench": "decode", "impl": "llama.cpp", "version": llama_cpp.__version__,
                      "model": os.path.basename(a.model), "prompt_tokens": len(prompt),
                      "tokens": a.tokens, "threads": threads, "tokens_per_s": tps,
                      "prefill_tokens_per_s": statistics.median(prefill)}), flush=True)
    if a.nextok_tokens_per_s > 0:
        ratio = {"bench": "decode_ratio", "nextok_over_llama_cpp": a.nextok_tokens_per_s / tps}
        if a.nextok_prefill_tokens_per_s > 0:
            ratio["prefill_nextok_over_llama_cpp"] = (a.nextok_prefill_tokens_per_s
                                                      / statistics.median(prefill))
        print(json.dumps(ratio), flush=True)


if __name__ == "__main__":
    main()
