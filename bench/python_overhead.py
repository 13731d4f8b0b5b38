#!/usr/bin/env python3
"""Python-boundary cost of the nextok package, and batch bitmask fills
against XGrammar and llguidance on the same schemas, states and threads.

Prints one JSON object per line:
  {"bench": "call", ...}        per-call ns of accept_token (+ rollback) and
                                fill_next_token_bitmask from Python and the
                                same calls timed inside C++ (the overhead is
                                the difference);
  {"bench": "batch_fill", ...}  median us of one batch fill of B matchers on
                                the Llama-3.1 vocabulary, per library, with
                                the ratio to nextok.

Usage: python bench/python_overhead.py [--tokenizer DIR] [--reps N] [--threads 1,2]
The tokenizer defaults to ../shared/tokenizers/llama3.1 (decompressed to a
temporary directory). XGrammar and llguidance are measured when they import.
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
from typing import Any, Callable

import nextok

ROOT = pathlib.Path(__file__).resolve().parents[1]

SCHEMAS: dict[str, dict[str, Any]] = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0},
            "email": {"type": "string", "format": "email"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "active": {"type": "boolean"},
        },
        "required": ["name", "age", "active"],
        "additionalProperties": False,
    },
    "order": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string"},
                        "qty": {"type": "integer"},
                        "price": {"type": "number"},
                    },
                    "required": ["sku", "qty", "price"],
                },
            },
            "status": {"enum": ["new", "paid", "shipped"]},
        },
        "required": ["id", "items", "status"],
    },
}
DOCS = {
    "person": {
        "name": "Ada Lovelace",
        "age": 36,
        "email": "ada@example.org",
        "tags": ["math", "poetry", "engines"],
        "active": True,
    },
    "order": {
        "id": "ABC-1234",
        "items": [
            {"sku": "kettle", "qty": 2, "price": 19.5},
            {"sku": "cup", "qty": 6, "price": 3.25},
        ],
        "status": "paid",
    },
}


def emit(**kw: Any) -> None:
    print(json.dumps(kw), flush=True)


def median_time(fn: Callable[[], None], reps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples)


def tokenizer_dir(arg: str | None, tmp: pathlib.Path) -> pathlib.Path:
    if arg:
        return pathlib.Path(arg)
    src = ROOT.parent / "shared" / "tokenizers" / "llama3.1"
    (tmp / "tokenizer.json").write_bytes(lzma.decompress((src / "tokenizer.json.xz").read_bytes()))
    (tmp / "tokenizer_config.json").write_bytes((src / "tokenizer_config.json").read_bytes())
    return tmp


def call_overhead(info: nextok.TokenizerInfo, tokens: list[int], blocks: int) -> None:
    g = nextok.Grammar.json_schema(SCHEMAS["person"], info)
    block = 200
    for pos in (1, len(tokens) // 2):
        m = nextok.Matcher(g)
        m.accept_tokens(tokens[:pos])
        t = tokens[pos]
        bm = nextok.allocate_token_bitmask(1, info.vocab_size)
        native = nextok._nextok._native_timing(m, t, bm, blocks, block)
        py_accept, py_fill = [], []
        accept, rollback, fill = m.accept_token, m.rollback, m.fill_next_token_bitmask
        for _ in range(blocks):
            t0 = time.perf_counter_ns()
            for _ in range(block):
                accept(t)
                rollback(1)
            py_accept.append((time.perf_counter_ns() - t0) / block)
            t0 = time.perf_counter_ns()
            for _ in range(block):
                fill(bm)
            py_fill.append((time.perf_counter_ns() - t0) / block)
        for op, py, cpp in (
            ("accept_token+rollback", py_accept, native["accept_rollback_ns"]),
            ("fill_next_token_bitmask", py_fill, native["fill_ns"]),
        ):
            p, c = statistics.median(py), statistics.median(cpp)
            emit(
                bench="call",
                op=op,
                position=pos,
                python_ns=round(p, 1),
                cpp_ns=round(c, 1),
                overhead_ns=round(p - c, 1),
                calls=2 if op.startswith("accept") else 1,
            )


def nextok_batch(
    info: nextok.TokenizerInfo,
    schema: dict[str, Any],
    states: list[list[int]],
    threads: int,
    reps: int,
) -> float:
    g = nextok.Grammar.json_schema(schema, info)
    ms = []
    for s in states:
        m = nextok.Matcher(g)
        m.accept_tokens(s)
        ms.append(m)
    bm = nextok.allocate_token_bitmask(len(ms), info.vocab_size)
    return median_time(lambda: nextok.fill_next_token_bitmasks(ms, bm, threads=threads), reps)


def xgrammar_batch(
    xgr: Any, xinfo: Any, schema: dict[str, Any], states: list[list[int]], threads: int, reps: int
) -> float:
    compiled = xgr.GrammarCompiler(xinfo, max_threads=threads).compile_json_schema(
        json.dumps(schema), strict_mode=True
    )
    ms = []
    for s in states:
        m = xgr.GrammarMatcher(compiled)
        for t in s:
            assert m.accept_token(t), "xgrammar refused a token of the document"
        ms.append(m)
    bm = xgr.allocate_token_bitmask(len(ms), xinfo.vocab_size)
    batch = xgr.BatchGrammarMatcher(max_threads=threads)
    return median_time(lambda: batch.batch_fill_next_token_bitmask(ms, bm), reps)


def llguidance_batch(
    llg: Any,
    lltok: Any,
    vocab: int,
    schema: dict[str, Any],
    states: list[list[int]],
    threads: int,
    reps: int,
) -> float:
    import llguidance.numpy as llnp

    grammar = llg.LLMatcher.grammar_from_json_schema(json.dumps(schema))
    ms = []
    for s in states:
        m = llg.LLMatcher(lltok, grammar)
        assert m.consume_tokens(s), "llguidance refused a token of the document"
        ms.append(m)
    bm = llnp.allocate_token_bitmask(len(ms), vocab)
    ex = llg.LLExecutor(num_threads=threads)
    pairs = [(m, i) for i, m in enumerate(ms)]
    return median_time(lambda: llnp.fill_next_token_bitmask_par(ex, pairs, bm), reps)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", help="directory with tokenizer.json (default: Llama 3.1)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batches", default="1,16,64,256")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        d = tokenizer_dir(args.tokenizer, pathlib.Path(tmp))
        info = nextok.TokenizerInfo.from_path(d)
        try:
            import transformers

            hf_tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
        except ImportError:
            hf_tok = None
        if hf_tok is None:
            emit(bench="error", what="transformers is needed to tokenize the documents")
            return 1
        docs = {k: hf_tok.encode(json.dumps(v), add_special_tokens=False) for k, v in DOCS.items()}
        emit(
            bench="setup",
            tokenizer=str(d),
            num_tokens=info.num_tokens,
            nextok=nextok.__version__,
            doc_tokens={k: len(v) for k, v in docs.items()},
        )
        call_overhead(info, docs["person"], blocks=max(args.reps, 15))

        libs: dict[str, Callable[[dict[str, Any], list[list[int]], int], float]] = {
            "nextok": lambda s, st, t: nextok_batch(info, s, st, t, args.reps)
        }
        try:
            import xgrammar as xgr

            xinfo = xgr.TokenizerInfo.from_huggingface(hf_tok, vocab_size=info.vocab_size)
            libs["xgrammar"] = lambda s, st, t: xgrammar_batch(xgr, xinfo, s, st, t, args.reps)
        except Exception as e:  # noqa: BLE001 - report and go on without it
            emit(bench="skip", lib="xgrammar", why=repr(e))
        try:
            import llguidance as llg
            import llguidance.hf

            lltok = llguidance.hf.from_tokenizer(hf_tok, n_vocab=info.vocab_size)
            libs["llguidance"] = lambda s, st, t: llguidance_batch(
                llg, lltok, info.vocab_size, s, st, t, args.reps
            )
        except Exception as e:  # noqa: BLE001
            emit(bench="skip", lib="llguidance", why=repr(e))

        for name, schema in SCHEMAS.items():
            toks = docs[name]
            for b in batches:
                # Matcher i sits after a prefix of the document, spread over its length.
                states = [toks[: (i * 7) % len(toks)] for i in range(b)]
                for t in threads:
                    results = {lib: fn(schema, states, t) for lib, fn in libs.items()}
                    base = results["nextok"]
                    for lib, ns in results.items():
                        emit(
                            bench="batch_fill",
                            schema=name,
                            batch=b,
                            threads=t,
                            lib=lib,
                            median_us=round(ns / 1000, 1),
                            ratio_to_nextok=round(ns / base, 2),
                        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
