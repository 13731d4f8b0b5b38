"""Test vectors for the top_k_first order from real FlashInfer (GPU machine).

For every case of tests/python/top_k_first_cases.py: softmax(logits / T) in
float32, then flashinfer.sampling.top_k_renorm_probs and
top_p_renorm_probs: the distribution that FlashInfer's default
top_k_top_p_sampling_from_logits order samples from. Prints JSON (the
surviving ids and probabilities per case) for
tests/python/data/flashinfer_top_k_first.json.

Usage: python3 bench/flashinfer_top_k_first_vectors.py > vectors.json
"""
import json
import pathlib
import sys

import torch
import flashinfer
import flashinfer.sampling as fis  # the trimmed wheel has no top-level re-export

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))
import top_k_first_cases  # noqa: E402


def main():
    out = {"flashinfer": flashinfer.__version__, "torch": torch.__version__, "cases": []}
    for case in top_k_first_cases.cases():
        logits = top_k_first_cases.case_logits(case["seed"], case["vocab"], case["power"],
                                               case["scale"])
        x = torch.from_numpy(logits).cuda()[None]
        probs = torch.softmax(x / case["temperature"], dim=-1)
        pk = fis.top_k_renorm_probs(probs, case["top_k"])
        pp = fis.top_p_renorm_probs(pk, case["top_p"])[0].cpu()
        ids = torch.nonzero(pp).flatten()
        out["cases"].append(dict(case, ids=ids.tolist(),
                                 probs=[float(v) for v in pp[ids].tolist()]))
    json.dump(out, sys.stdout, indent=0)
    print()


if __name__ == "__main__":
    main()
