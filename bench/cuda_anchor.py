"""Times the reference GPU samplers on the shapes of nextok_cuda_bench and
prints the same JSON lines (impl, B, V, dtype, median_us):

  torch_argmax            torch.argmax(logits, -1)
  torch_sort_topk_topp    softmax, sort, top-k and top-p masks, multinomial
  flashinfer_top_k_top_p  flashinfer.sampling.top_k_top_p_sampling_from_logits
                          (only when flashinfer imports)

Logits are torch.randn, top_k=50, top_p=0.9, temperature 1, as in the C++
benchmark. Medians of per-call CUDA-event timings after a warm-up.
"""
import json
import sys

import torch


def median_us(fn, warmup=10, iters=100):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def torch_sort_sample(logits, top_k, top_p):
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_p, idx = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sorted_p, dim=-1)
    drop = (cum - sorted_p) > top_p
    drop[:, top_k:] = True
    sorted_p = sorted_p.masked_fill(drop, 0.0)
    pick = torch.multinomial(sorted_p, 1)
    return torch.gather(idx, 1, pick)


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    try:
        import flashinfer.sampling as fis
    except Exception as e:  # noqa: BLE001
        fis = None
        print(f"# flashinfer unavailable: {e}", file=sys.stderr)
    torch.manual_seed(0)
    for vocab in (151936, 262144):
        for rows in (1, 8, 64, 256):
            base = torch.randn(rows, vocab, device="cuda")
            for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
                x = base.to(dt)

                def emit(impl, us):
                    print(json.dumps({"impl": impl, "B": rows, "V": vocab, "dtype": name,
                                      "median_us": round(us, 2)}), flush=True)

                emit("torch_argmax", median_us(lambda: torch.argmax(x, dim=-1), iters=iters))
                emit("torch_sort_topk_topp",
                     median_us(lambda: torch_sort_sample(x, 50, 0.9), iters=iters))
                if fis is not None:
                    emit("flashinfer_top_k_top_p",
                         median_us(lambda: fis.top_k_top_p_sampling_from_logits(x, 50, 0.9),
                                   iters=iters))


if __name__ == "__main__":
    main()
