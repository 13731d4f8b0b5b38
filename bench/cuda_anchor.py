"""Times the reference GPU samplers on the shapes of nextok_cuda_bench and
prints the same JSON lines (impl, B, V, dtype, median_us):

  torch_argmax            torch.argmax(logits, -1)
  torch_sort_topk_topp    softmax, sort, top-k and top-p masks, multinomial
  torch_logprobs_top20    log_softmax in f32, topk(20) and the chosen token's
                          logprob (what engines compute for top_logprobs)
  flashinfer_top_k_top_p  flashinfer.sampling.top_k_top_p_sampling_from_logits
                          (default filter_apply_order="top_k_first")
  flashinfer_top_k_top_p_joint  the same with filter_apply_order="joint"
                          (both only when flashinfer imports; a dtype it
                          rejects is skipped with a '#' line on stderr)
  xgrammar_bitmask_only   xgrammar.apply_token_bitmask_inplace(y, bitmask)
  xgrammar_bitmask_argmax the same, then torch.argmax(y, -1)
                          (only when xgrammar imports)

Logits are torch.randn, top_k=50, top_p=0.9, temperature 1, as in the C++
benchmark. The bitmask is int32 [B, ceil(V/32)] of uniformly random bits (about
half the vocabulary allowed), like the C++ benchmark's random mask. The masked
copy y is made once per shape; masking it again each call is idempotent.
Medians of per-call CUDA-event timings after a warm-up.

Usage: cuda_anchor.py [ITERS] [IMPL,...]   (IMPL: impl-name prefixes to run)
XGRAMMAR_BACKEND=cuda selects xgrammar's CUDA kernel instead of its default
(auto, which is Triton on CUDA tensors); the impl names then end in _cuda.
bench/offline_anchor_wheels.sh prepares flashinfer and xgrammar for a GPU
machine without network.
"""
import json
import os
import sys
import time

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


# FlashInfer's default order "top_k_first" takes its radix top-k fast path
# (JIT module "topk") for k <= 256 and V >= 65536; "joint" is the fused
# rejection-sampling kernel over softmax probabilities (JIT module "sampling").
FLASHINFER_IMPLS = (("flashinfer_top_k_top_p", "top_k_first"),
                    ("flashinfer_top_k_top_p_joint", "joint"))


def _version(dist):
    from importlib.metadata import version
    try:
        return version(dist)
    except Exception:  # noqa: BLE001
        return "?"


def note(msg):
    print(f"# {msg}", file=sys.stderr, flush=True)


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    wanted = sys.argv[2].split(",") if len(sys.argv) > 2 else None

    def want(impl):
        return wanted is None or any(impl.startswith(w) for w in wanted)

    def want_family(prefix):
        return wanted is None or any(w.startswith(prefix) or prefix.startswith(w)
                                     for w in wanted)

    fis = None
    if want_family("flashinfer"):
        try:
            import flashinfer.sampling as fis
            import flashinfer
            note(f"flashinfer {flashinfer.__version__}")
        except Exception as e:  # noqa: BLE001
            note(f"flashinfer unavailable: {e!r}")
    xgr = None
    xgr_backend = os.environ.get("XGRAMMAR_BACKEND", "auto")
    xgr_suffix = "" if xgr_backend in ("auto", "triton") else "_" + xgr_backend
    if want_family("xgrammar"):
        try:
            import xgrammar as xgr
            # "auto" resolves to the Triton kernel for CUDA tensors.
            note(f"xgrammar {_version('xgrammar')}, apply_token_bitmask_inplace backend="
                 f"{'triton' if xgr_backend == 'auto' else xgr_backend}")
        except Exception as e:  # noqa: BLE001
            note(f"xgrammar unavailable: {e!r}")
    fi_failed = set()
    torch.manual_seed(0)
    for vocab in (151936, 262144):
        for rows in (1, 8, 64, 256):
            base = torch.randn(rows, vocab, device="cuda")
            bitmask = torch.randint(-(2**31), 2**31, (rows, (vocab + 31) // 32),
                                    dtype=torch.int32, device="cuda")
            for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
                x = base.to(dt)

                def emit(impl, us):
                    print(json.dumps({"impl": impl, "B": rows, "V": vocab, "dtype": name,
                                      "median_us": round(us, 2)}), flush=True)

                if want("torch_argmax"):
                    emit("torch_argmax",
                         median_us(lambda: torch.argmax(x, dim=-1), iters=iters))
                if want("torch_logprobs_top20"):
                    chosen = torch.zeros(rows, 1, dtype=torch.int64, device="cuda")

                    def torch_logprobs():
                        lp = torch.log_softmax(x.float(), dim=-1)
                        return lp.topk(20, dim=-1), lp.gather(1, chosen)
                    emit("torch_logprobs_top20", median_us(torch_logprobs, iters=iters))
                if want("torch_sort_topk_topp"):
                    emit("torch_sort_topk_topp",
                         median_us(lambda: torch_sort_sample(x, 50, 0.9), iters=iters))
                for impl, order in FLASHINFER_IMPLS:
                    if fis is None or not want(impl) or (impl, name) in fi_failed:
                        continue

                    def fi_call(order=order):
                        return fis.top_k_top_p_sampling_from_logits(
                            x, 50, 0.9, filter_apply_order=order)
                    try:
                        t0 = time.perf_counter()
                        fi_call()  # the first call JIT-compiles the kernels it needs
                        torch.cuda.synchronize()
                        first_s = time.perf_counter() - t0
                        if first_s > 1.0:
                            note(f"{impl}: first call (JIT build/load) {first_s:.1f} s")
                    except Exception as e:  # noqa: BLE001
                        fi_failed.add((impl, name))
                        note(f"{impl} skipped for {name}: {e!r}"[:400])
                    else:
                        emit(impl, median_us(fi_call, iters=iters))
                if xgr is not None and want_family("xgrammar"):
                    y = x.clone()

                    def mask_only():
                        xgr.apply_token_bitmask_inplace(y, bitmask, backend=xgr_backend)

                    def mask_argmax():
                        xgr.apply_token_bitmask_inplace(y, bitmask, backend=xgr_backend)
                        return torch.argmax(y, dim=-1)

                    if want("xgrammar_bitmask_only"):
                        emit("xgrammar_bitmask_only" + xgr_suffix, median_us(mask_only, iters=iters))
                    if want("xgrammar_bitmask_argmax"):
                        emit("xgrammar_bitmask_argmax" + xgr_suffix,
                             median_us(mask_argmax, iters=iters))
                    del y


if __name__ == "__main__":
    main()
