"""Anchor side of `nextok maskbench`: runs llguidance, XGrammar or outlines-core on
the same JSON-Schema files and prints the same per-schema lines and summary.

Per schema: TTFM = compile + first mask on one thread. Per instance:
json.dumps(data, ensure_ascii=False) is tokenized without special tokens and walked
token by token (each mask computation is one TBM sample), then one more mask must
allow a Llama-3.1 EOS. A valid instance must be accepted to the end, an invalid one
refused somewhere; a schema passes when it compiles and every instance is judged
right (MaskBench's definition).

Schemas run in a forked worker so that a compile past --timeout-ms can be killed
and an engine crash costs one schema, not the run.
"""
import argparse
import json
import math
import os
import select
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

EOS_IDS = (128001, 128008, 128009)  # <|end_of_text|>, <|eom_id|>, <|eot_id|>


class Llguidance:
    packages = ("llguidance",)
    options = "grammar_from_json_schema defaults (flexible whitespace)"

    def __init__(self, tokenizer_path, vocab_size):
        import llguidance

        self.llg = llguidance
        self.tok = llguidance.LLTokenizer(Path(tokenizer_path).read_text(encoding="utf-8"),
                                          n_vocab=vocab_size, eos_token=list(EOS_IDS))

    def compile(self, schema):
        grammar = self.llg.LLMatcher.grammar_from_json_schema(json.dumps(schema))
        matcher = self.llg.LLMatcher(self.tok, grammar, log_level=0)
        if matcher.is_error():  # the constructor reports grammar errors this way, not by raising
            raise ValueError(matcher.get_error())
        return matcher

    def start(self, compiled):
        return compiled.deep_copy()

    def fill(self, matcher, mask):
        matcher.unsafe_compute_mask_ptr(mask.ctypes.data, mask.nbytes)

    def consume(self, matcher, token):
        return matcher.consume_token(token)


class XGrammar:
    packages = ("xgrammar", "transformers", "torch")
    options = "compile_json_schema(any_whitespace=True, strict_mode=True default), cache off"

    def __init__(self, tokenizer_path, vocab_size):
        import transformers
        import xgrammar

        self.xgr = xgrammar
        hf = transformers.PreTrainedTokenizerFast(tokenizer_file=tokenizer_path)
        info = xgrammar.TokenizerInfo.from_huggingface(hf, vocab_size=vocab_size,
                                                       stop_token_ids=list(EOS_IDS))
        # Without the cache every schema is really compiled, even repeated ones.
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    def compile(self, schema):
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True)

    def start(self, compiled):
        return self.xgr.GrammarMatcher(compiled)

    def fill(self, matcher, mask):
        matcher.fill_next_token_bitmask(mask)

    def consume(self, matcher, token):
        return matcher.accept_token(token)


class OutlinesCore:
    packages = ("outlines_core",)
    options = "build_regex_from_schema default whitespace '[ ]?', EOS 128009 only"

    def __init__(self, tokenizer_path, vocab_size):
        import outlines_core

        self.oc = outlines_core
        self.words = (vocab_size + 31) // 32
        model = json.loads(Path(tokenizer_path).read_text(encoding="utf-8"))["model"]
        # Byte-level BPE spells bytes as printable characters (GPT-2's table); undo that.
        printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
        extra = [b for b in range(256) if b not in printable]
        to_byte = {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(extra)}
        by_bytes = {}
        for piece, token in model["vocab"].items():
            by_bytes.setdefault(bytes(to_byte[c] for c in piece), []).append(token)
        # One EOS id only: Vocabulary takes a single one (the chat EOS, <|eot_id|>).
        self.vocab = outlines_core.Vocabulary(EOS_IDS[-1], by_bytes)

    def compile(self, schema):
        regex = self.oc.json_schema.build_regex_from_schema(json.dumps(schema))
        return self.oc.Index(regex, self.vocab)

    def start(self, compiled):
        return self.oc.Guide(compiled)

    def fill(self, guide, mask):
        guide.write_mask_into(mask.ctypes.data, self.words, 4)

    def consume(self, guide, token):
        try:
            guide.advance(token, return_tokens=False)
            return True
        except ValueError:
            return False


ENGINES = {"llguidance": Llguidance, "xgrammar": XGrammar, "outlines-core": OutlinesCore}


def load_schemas(paths, no_optional):
    """(file, index, schema, tests) for every schema, files in sorted order."""
    files = []
    for arg in map(Path, paths):
        if arg.is_dir():
            files += sorted(f for f in arg.rglob("*.json")
                            if not (no_optional and "optional" in f.relative_to(arg).parts))
        else:
            files.append(arg)
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(doc, list):  # JSON-Schema-Test-Suite: one schema per group
            for i, group in enumerate(doc):
                yield str(f), i, group["schema"], group["tests"]
        elif isinstance(doc, dict) and "schema" in doc:  # MaskBench: one schema per file
            yield str(f), 0, doc["schema"], doc.get("tests", [])
        else:
            print(f"{f}: neither MaskBench nor JSON-Schema-Test-Suite format", file=sys.stderr)


def describe(e):
    return " ".join(f"{type(e).__name__}: {e}".split())[:300]  # one line, short


def tokenize(tok, tests):
    """(valid, ids) per instance; instances that cannot be serialized or tokenized
    (lone surrogates, NaN) come back as skip reasons instead."""
    out, skipped = [], []
    for test in tests:
        try:
            text = test["text"] if isinstance(test.get("text"), str) else \
                json.dumps(test["data"], ensure_ascii=False, allow_nan=False)
            out.append((test["valid"], tok.encode(text, add_special_tokens=False).ids))
        except Exception as e:  # noqa: BLE001 - any failure only skips the instance
            skipped.append(f"{test.get('description', '?')}: {describe(e)}")
    return out, skipped


def bit(words, token):
    return (int(words[token >> 5]) >> (token & 31)) & 1


def walk(engine, compiled, ids, mask, tbm_ns):
    """True when every token is allowed and consumed, and then an EOS is allowed."""
    matcher = engine.start(compiled)
    for token in ids + [None]:
        t0 = time.perf_counter_ns()
        engine.fill(matcher, mask)
        tbm_ns.append(time.perf_counter_ns() - t0)
        if token is None:
            return any(bit(mask[0], e) for e in EOS_IDS)
        if not bit(mask[0], token) or not engine.consume(matcher, token):
            return False


def measure(engine, schema, instances, mask, out):
    """Runs in the worker: line 1 after compile (TTFM or error), line 2 the walk results."""
    def send(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        t0 = time.perf_counter_ns()
        compiled = engine.compile(schema)
        engine.fill(engine.start(compiled), mask)
        send({"ttfm_ns": time.perf_counter_ns() - t0})
    except Exception as e:  # noqa: BLE001 - a compile error is a result, not a crash
        send({"error": describe(e)})
        return
    tbm_ns, valid_rejected, invalid_accepted = [], 0, 0
    try:
        for valid, ids in instances:
            accepted = walk(engine, compiled, ids, mask, tbm_ns)
            valid_rejected += valid and not accepted
            invalid_accepted += accepted and not valid
        send({"tbm_ns": tbm_ns, "valid_rejected": valid_rejected,
              "invalid_accepted": invalid_accepted})
    except Exception as e:  # noqa: BLE001
        send({"tbm_ns": tbm_ns, "error": "while matching: " + describe(e)})


class Worker:
    """A forked process that runs schemas one after another, so that the engine keeps
    its caches and heap warm as in a plain in-process loop (a fresh fork per schema
    adds milliseconds to TTFM), while a compile past the timeout can still be killed
    and a crash costs one schema. A new worker is warmed up on one small schema."""
    WARMUP = {"schema": {"type": "object", "properties": {"a": {"type": "string"}}},
              "data": {"a": "b"}}

    def __init__(self, engine, mask, tok):
        self.engine, self.mask = engine, mask
        text = json.dumps(self.WARMUP["data"])
        self.warmup = [(True, tok.encode(text, add_special_tokens=False).ids)]
        self.pid = None

    def _spawn(self):
        sys.stdout.flush()
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(job_w)
            os.close(res_r)
            with os.fdopen(job_r) as jobs, os.fdopen(res_w, "w") as out:
                for line in jobs:
                    job = json.loads(line)
                    measure(self.engine, job["schema"], job["instances"], self.mask, out)
            os._exit(0)
        os.close(job_r)
        os.close(res_w)
        self.pid, self.jobs, self.results = pid, os.fdopen(job_w, "w"), os.fdopen(res_r)
        first, _ = self._send(self.WARMUP["schema"], self.warmup, None)
        if "ttfm_ns" not in first:
            raise RuntimeError(f"the engine fails on the warm-up schema: {first}")

    def _stop(self, kill):
        if kill:
            os.kill(self.pid, 9)
        self.jobs.close()
        self.results.close()
        status = os.waitpid(self.pid, 0)[1]
        self.pid = None
        return {"error": f"engine crashed (wait status {status})"}

    def _send(self, schema, instances, timeout_s):
        self.jobs.write(json.dumps({"schema": schema, "instances": instances}) + "\n")
        self.jobs.flush()
        if not select.select([self.results], [], [], timeout_s)[0]:
            self._stop(kill=True)
            return {"timeout": True}, None
        first = self.results.readline()  # EOF: the worker died
        if not first:
            return self._stop(kill=False), None
        first = json.loads(first)
        if "error" in first:
            return first, None
        second = self.results.readline()
        return first, (json.loads(second) if second else self._stop(kill=False))

    def run(self, schema, instances, timeout_s):
        """(compile line, walk line or None); {"timeout": True} or a crash error in
        place of what the worker did not send."""
        if self.pid is None:
            self._spawn()
        return self._send(schema, instances, timeout_s)

    def close(self):
        if self.pid is not None:
            self._stop(kill=False)


def percentile(sorted_vals, p):
    """Nearest rank: the smallest value with at least p of the samples at or below it."""
    if not sorted_vals:
        return None
    return round(sorted_vals[max(0, math.ceil(p * len(sorted_vals)) - 1)], 1)


def versions(engine_cls):
    out = {"python": sys.version.split()[0]}
    for pkg in ("tokenizers", "numpy", *engine_cls.packages):
        try:
            out[pkg] = version(pkg.replace("_", "-"))
        except PackageNotFoundError:
            out[pkg] = None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (*.json, recursive)")
    ap.add_argument("--tokenizer", required=True, help="HF tokenizer.json (Llama-3.1)")
    ap.add_argument("--impl", choices=sorted(ENGINES), default="llguidance")
    ap.add_argument("--json", action="store_true", help="print JSON lines")
    ap.add_argument("--limit", type=int, help="first N schemas only")
    ap.add_argument("--timeout-ms", type=float, default=10000, help="per-schema compile limit")
    ap.add_argument("--no-optional", action="store_true", help="skip optional/ folders")
    args = ap.parse_args()

    engine_cls = ENGINES[args.impl]
    tok = Tokenizer.from_file(args.tokenizer)
    vocab_size = tok.get_vocab_size(with_added_tokens=True)
    try:
        engine = engine_cls(args.tokenizer, vocab_size)
    except ImportError as e:
        print(json.dumps({"warning": f"{args.impl} unavailable: {e}", "impl": args.impl}))
        return
    mask = np.zeros((1, (vocab_size + 31) // 32), dtype=np.int32)
    worker = Worker(engine, mask, tok)

    n = {"schemas": 0, "passing": 0, "compile_error": 0, "valid_rejected": 0,
         "invalid_accepted": 0, "timeout": 0}
    tbm, ttfm, n_skipped = [], [], 0
    for k, (file, index, schema, tests) in enumerate(load_schemas(args.paths, args.no_optional)):
        if args.limit is not None and k >= args.limit:
            break
        instances, skipped = tokenize(tok, tests)
        first, second = worker.run(schema, instances, args.timeout_ms / 1000)
        row = {"file": file, "index": index, "compiled": "ttfm_ns" in first}
        if "timeout" in first:
            row["error"] = f"compile timeout ({args.timeout_ms:g} ms)"
            n["timeout"] += 1
        elif not row["compiled"]:
            row["error"] = first["error"]
            n["compile_error"] += 1
        else:
            ttfm.append(first["ttfm_ns"] / 1e3)
            tbm += [t / 1e3 for t in second.get("tbm_ns", [])]
            if "error" in second:
                row["error"] = second["error"]
        row["ttfm_us"] = round(first["ttfm_ns"] / 1e3, 1) if row["compiled"] else None
        row["valid_rejected"] = second.get("valid_rejected", 0) if second else 0
        row["invalid_accepted"] = second.get("invalid_accepted", 0) if second else 0
        row["passing"] = (row["compiled"] and "error" not in row
                          and row["valid_rejected"] == row["invalid_accepted"] == 0)
        if skipped:
            row["skipped"] = skipped
        n["schemas"] += 1
        n["passing"] += row["passing"]
        n["valid_rejected"] += row["valid_rejected"]
        n["invalid_accepted"] += row["invalid_accepted"]
        n_skipped += len(skipped)
        if args.json:
            print(json.dumps(row, ensure_ascii=False), flush=True)
        elif not row["passing"]:
            why = row.get("error") or (f"valid_rejected={row['valid_rejected']} "
                                       f"invalid_accepted={row['invalid_accepted']}")
            print(f"FAIL {file}#{index}: {why}", flush=True)
    worker.close()

    tbm.sort()
    ttfm.sort()
    summary = {"summary": True, "impl": args.impl, **n,
               "tbm_us": {"avg": round(sum(tbm) / len(tbm), 1) if tbm else None,
                          "p50": percentile(tbm, 0.5), "p99": percentile(tbm, 0.99),
                          "max": percentile(tbm, 1.0)},
               "ttfm_us": {"p50": percentile(ttfm, 0.5), "p90": percentile(ttfm, 0.9),
                           "p99": percentile(ttfm, 0.99)},
               "masks": len(tbm), "skipped_instances": n_skipped,
               "options": engine_cls.options, "version": versions(engine_cls)}
    if args.json:
        print(json.dumps(summary))
    else:
        for key, value in summary.items():
            print(f"{key:>18}: {value}")


if __name__ == "__main__":
    main()
