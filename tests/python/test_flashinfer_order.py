"""The top_k_first filter order against real FlashInfer: vectors from
flashinfer.sampling.top_k_renorm_probs + top_p_renorm_probs (0.7.4, on an
H200, bench/flashinfer_top_k_first_vectors.py) for the cases of
top_k_first_cases.py. nextok's `explain --filter-order top_k_first` must keep
exactly the same tokens, with probabilities within FlashInfer's float32
rounding. The logits have no ties among the survivors, where the two tie
rules (by id here, by value there) would differ.
"""
import json
import pathlib

import numpy as np
import pytest

import top_k_first_cases
from conftest import run_cli

VECTORS = json.loads((pathlib.Path(__file__).parent / "data" / "flashinfer_top_k_first.json")
                     .read_text())


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"seed{c['seed']}")
def test_top_k_first_matches_flashinfer(cli, case, tmp_path):
    assert [k for k in case if k not in ("ids", "probs")] == list(
        top_k_first_cases.cases()[[c["seed"] for c in top_k_first_cases.cases()].index(
            case["seed"])])
    logits = top_k_first_cases.case_logits(case["seed"], case["vocab"], case["power"],
                                           case["scale"])
    path = tmp_path / "logits.npy"
    np.save(path, logits)
    out = json.loads(run_cli(cli, "explain", "--logits", path, "--json", "--filter-order",
                             "top_k_first", "--temperature", repr(case["temperature"]),
                             "--top-k", case["top_k"], "--top-p", repr(case["top_p"])).stdout)
    got = dict(zip(out["final"]["ids"], out["final"]["probs"]))
    want = dict(zip(case["ids"], case["probs"]))
    assert sorted(got) == sorted(want)
    assert max(abs(got[i] - want[i]) for i in want) <= 2e-6
    # The cases exercise the order: top-p cuts inside the top-k set.
    assert len(want) <= case["top_k"]


def test_vectors_cover_both_filters():
    cut_by_p = [c for c in VECTORS["cases"] if 1 < len(c["ids"]) < c["top_k"]]
    assert len(VECTORS["cases"]) >= 40 and len(cut_by_p) >= 10
