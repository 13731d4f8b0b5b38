#!/usr/bin/env python3
"""Summarises bench/cuda_ab.sh's output folder as markdown tables: the B = 1
back-to-back medians of the three interleaved runs (base, new) and the
B = 64 / 256 rows. Usage: cuda_ab_summary.py DIR"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROWS = [
    ("nextok_pipeline_topk50_topp0.9_b2b", "f32", "spec"),
    ("nextok_pipeline_top_k_first_topk50_topp0.9_b2b", "f32", "top_k_first"),
    ("nextok_pipeline_topk50_topp0.9_b2b", "bf16", "spec"),
    ("nextok_pipeline_spec_cluster_b2b", "f32", "spec, cluster kernel alone"),
    ("nextok_pipeline_topk50_topp0.9_no_pdl_b2b", "f32", "spec, no PDL"),
    ("nextok_pipeline_topk50_topp0.9", "f32", "spec, per bracketed call"),
]


def records(path: Path, fields: int) -> list[tuple[list[str], dict]]:
    """Lines of 'tag... {json}' (the bench's JSON lines behind fields tags)."""
    out = []
    for line in path.read_text().splitlines():
        parts = line.split(" ", fields)
        try:
            out.append((parts[:fields], json.loads(parts[fields])))
        except (ValueError, IndexError):
            continue
    return out


def main(d: Path) -> None:
    b1: dict[tuple, list[float]] = defaultdict(list)
    for (tree, _), r in records(d / "b1.txt", 2):
        b1[(r["impl"], r["V"], r["dtype"], tree)].append(r["median_us"])
    print("| V 151936, B = 1 | base | new |\n|---|---|---|")
    for impl, dt, label in ROWS:
        cells = []
        for t in ("base", "new"):
            v = b1.get((impl, 151936, dt, t), [])
            med = f" (**{statistics.median(v):.2f}**)" if v else ""
            cells.append(" / ".join(f"{x:.2f}" for x in v) + med)
        print(f"| {dt} {label} | {cells[0]} | {cells[1]} |")
    big = {}
    for (tree,), r in records(d / "big.txt", 1):
        big[(r["impl"], r["B"], r["V"], r["dtype"], tree)] = r["median_us"]
    print("\n| B >= 64 (b2b) | base | new | new/base |\n|---|---|---|---|")
    for impl, dt, label in ROWS[:3]:
        for vocab in (151936, 262144):
            for b in (64, 256):
                x, y = big.get((impl, b, vocab, dt, "base")), big.get((impl, b, vocab, dt, "new"))
                if x and y:
                    print(f"| {dt} {label} V {vocab} B {b} | {x:.2f} | {y:.2f} | {y / x:.3f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
