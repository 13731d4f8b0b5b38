#!/usr/bin/env python3
"""vLLM's per-step structured-output bitmask fill, by backend: nextok
(nextok.vllm) against vLLM's xgrammar and guidance backends, all inside
vLLM's own StructuredOutputManager.grammar_bitmask on the same requests
and token states.

Prints one JSON object per line:
  {"bench": "vllm_fill", "schema": ..., "batch": B, "backend": ...,
   "us": median us of one grammar_bitmask call, "ratio": us / nextok's}

Request i of a batch has accepted the first (i * 7) % L tokens of an example
document (L its length) before the timed fills. B > 128 takes vLLM's
threaded path (a pool of min(cores // 2, 8) threads), smaller batches its
serial loop. Usage: python bench/python_vllm_fill.py [--reps N] [--batches 1,16,64,256]
"""

from __future__ import annotations

import argparse
import json
import lzma
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python_pkg"))

SCHEMAS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "person": (
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}},
                "active": {"type": "boolean"},
            },
            "required": ["name", "age", "active"],
            "additionalProperties": False,
        },
        {"name": "Ada Lovelace", "age": 36, "tags": ["math", "engines"], "active": True},
    ),
    "order": (
        {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "status": {"enum": ["new", "paid", "shipped"]},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1},
                        },
                        "required": ["sku", "qty"],
                    },
                },
            },
            "required": ["id", "status", "items"],
        },
        {"id": 42, "status": "paid", "items": [{"sku": "A-1", "qty": 2}, {"sku": "B", "qty": 1}]},
    ),
}


def median_us(fn: Any, reps: int) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def run_backend(
    model: pathlib.Path, backend: str, batches: list[int], reps: int
) -> dict[tuple[str, int], float]:
    from vllm.engine.arg_utils import EngineArgs
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams
    from vllm.v1.request import Request
    from vllm.v1.structured_output import StructuredOutputManager

    config = EngineArgs(
        model=str(model),
        max_model_len=1024,
        max_num_seqs=max(batches),
        structured_outputs_config={"backend": backend},
    ).create_engine_config()
    manager = StructuredOutputManager(config)
    tok = manager.tokenizer
    out: dict[tuple[str, int], float] = {}
    for name, (schema, example) in SCHEMAS.items():
        doc = tok.encode(json.dumps(example), add_special_tokens=False)
        for batch in batches:
            requests = {}
            for i in range(batch):
                params = SamplingParams(
                    max_tokens=64, structured_outputs=StructuredOutputsParams(json=schema)
                )
                params.verify(
                    config.model_config,
                    config.speculative_config,
                    config.structured_outputs_config,
                    tok,
                )
                req = Request(f"{name}-{batch}-{i}", [1, 2], params, None)
                manager.grammar_init(req)
                requests[req.request_id] = req
            for i, req in enumerate(requests.values()):
                while not req.structured_output_request.is_grammar_ready:
                    time.sleep(0.001)
                grammar = req.structured_output_request.grammar
                if isinstance(grammar, Exception):
                    raise grammar
                prefix = doc[: (i * 7) % len(doc)]
                if prefix and not manager.accept_tokens(req, prefix):
                    raise RuntimeError(f"{backend} refused the example document of {name}")
            ids = list(requests)
            out[(name, batch)] = median_us(
                lambda requests=requests, ids=ids: manager.grammar_bitmask(requests, ids, {}),
                reps,
            )
    manager.clear_backend()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--backends", default="nextok,xgrammar,guidance")
    ap.add_argument(
        "--tokenizer", type=pathlib.Path, default=ROOT.parent / "shared/tokenizers/llama3.1"
    )
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]

    import nextok
    import nextok.vllm
    import vllm
    from engines_util import build_tiny_llama

    nextok.vllm.enable()
    with tempfile.TemporaryDirectory() as tmp:
        tok_dir = pathlib.Path(tmp) / "tok"
        tok_dir.mkdir()
        (tok_dir / "tokenizer.json").write_bytes(
            lzma.decompress((args.tokenizer / "tokenizer.json.xz").read_bytes())
        )
        model = build_tiny_llama(pathlib.Path(tmp) / "model", tok_dir)
        print(
            json.dumps({"bench": "config", "nextok": nextok.__version__, "vllm": vllm.__version__}),
            flush=True,
        )
        results = {b: run_backend(model, b, batches, args.reps) for b in args.backends.split(",")}
    for name in SCHEMAS:
        for batch in batches:
            base = results.get("nextok", {}).get((name, batch))
            for backend, res in results.items():
                us = res[(name, batch)]
                print(
                    json.dumps(
                        {
                            "bench": "vllm_fill",
                            "schema": name,
                            "batch": batch,
                            "backend": backend,
                            "us": round(us, 1),
                            "ratio": round(us / base, 2) if base else None,
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
