#!/usr/bin/env python3
"""CPU sampling from a torch tensor: nextok.sample against the usual torch
recipes (torch.topk + torch.multinomial; a sort-based top-p + multinomial;
softmax + multinomial), same logits, same batch.

Prints one JSON object per line:
  {"bench": "sample", "mode": ..., "batch": B, "vocab": V,
   "nextok_us": ..., "torch_us": ..., "ratio": torch_us / nextok_us}
with medians over --reps calls after 3 warm-up calls.

Modes: "top_k" (temperature 0.7, top_k 50), "top_p" (temperature 0.7,
top_p 0.9), "temperature" (temperature 0.7, full vocabulary).
Usage: python bench/python_sample.py [--reps N] [--batches 1,16,64] [--vocab 128256]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

import nextok
import torch

TEMPERATURE = 0.7
TOP_K = 50
TOP_P = 0.9


def torch_top_k(logits: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    values, ids = torch.topk(logits / TEMPERATURE, TOP_K, dim=-1)
    probs = torch.softmax(values, dim=-1)
    return ids.gather(-1, torch.multinomial(probs, 1, generator=gen))[:, 0]


def torch_top_p(logits: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    values, ids = torch.sort(logits / TEMPERATURE, dim=-1, descending=True)
    probs = torch.softmax(values, dim=-1)
    cum = torch.cumsum(probs, dim=-1)
    probs = probs.masked_fill(cum - probs > TOP_P, 0.0)  # keep the smallest prefix >= top_p
    return ids.gather(-1, torch.multinomial(probs, 1, generator=gen))[:, 0]


def torch_temperature(logits: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    probs = torch.softmax(logits / TEMPERATURE, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]


TORCH: dict[str, Callable[[torch.Tensor, torch.Generator], torch.Tensor]] = {
    "top_k": torch_top_k,
    "top_p": torch_top_p,
    "temperature": torch_temperature,
}
NEXTOK: dict[str, dict[str, Any]] = {
    "top_k": {"temperature": TEMPERATURE, "top_k": TOP_K},
    "top_p": {"temperature": TEMPERATURE, "top_p": TOP_P},
    "temperature": {"temperature": TEMPERATURE},
}


def median_us(fn: Callable[[], Any], reps: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--batches", default="1,16,64")
    ap.add_argument("--vocab", type=int, default=128256)  # Llama 3.1
    ap.add_argument("--scale", type=float, default=3.0, help="logits = randn * scale")
    ap.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    args = ap.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)

    gen = torch.Generator().manual_seed(0)
    print(
        json.dumps(
            {
                "bench": "config",
                "nextok": nextok.__version__,
                "torch": torch.__version__,
                "torch_threads": torch.get_num_threads(),
                "vocab": args.vocab,
                "scale": args.scale,
                "reps": args.reps,
            }
        ),
        flush=True,
    )
    for batch in (int(b) for b in args.batches.split(",")):
        logits = torch.randn((batch, args.vocab), generator=gen) * args.scale
        seeds = list(range(batch))
        for mode in ("top_k", "top_p", "temperature"):
            kw = NEXTOK[mode]
            ours = median_us(
                lambda x=logits, s=seeds, kw=kw: nextok.sample(x, seed=s, **kw), args.reps
            )
            theirs = median_us(lambda x=logits, f=TORCH[mode]: f(x, gen), args.reps)
            # Both draw from the same distribution: the token must be allowed there.
            tok = int(nextok.sample(logits[:1], seed=1, **kw).tokens[0])
            if mode == "top_k":
                assert tok in torch.topk(logits[0], TOP_K).indices.tolist()
            print(
                json.dumps(
                    {
                        "bench": "sample",
                        "mode": mode,
                        "batch": batch,
                        "vocab": args.vocab,
                        "nextok_us": round(ours, 1),
                        "torch_us": round(theirs, 1),
                        "ratio": round(theirs / ours, 2),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
