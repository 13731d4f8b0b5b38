"""Cases for the top_k_first order shared by the FlashInfer vector generator
(bench/flashinfer_top_k_first_vectors.py, run on a GPU machine) and the test
that checks nextok against those vectors (test_flashinfer_order.py).

Logits use IEEE-exact operations only (integer hashing, a permutation,
products), so every machine rebuilds the same float32 values: distinct,
with a peaked head like a model's (x**power of a random rank in (0, 1)).
"""
import itertools

import numpy as np

MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def case_logits(seed, vocab, power, scale):
    h = [splitmix64(seed * 1_000_003 + i) for i in range(vocab)]
    rank = np.empty(vocab, dtype=np.float64)
    rank[np.argsort(np.array(h, dtype=np.uint64), kind="stable")] = np.arange(vocab)
    x = (rank + 0.5) / vocab
    for _ in range(power):  # x ** (2 ** power), one rounding per product
        x = x * x
    return (scale * x).astype(np.float32)


def cases():
    out = []
    grid = itertools.product((1000, 32000, 151936), (3, 6), (8.0, 24.0), (0.7, 1.0, 1.3),
                             (1, 10, 50), (0.5, 0.9, 0.95))
    for n, (vocab, power, scale, temperature, top_k, top_p) in enumerate(grid):
        if n % 7 != 0:  # a spread-out subset of the grid
            continue
        out.append({"seed": n, "vocab": vocab, "power": power, "scale": scale,
                    "temperature": temperature, "top_k": top_k, "top_p": top_p})
    return out
