"""Grammar benchmark: nextok vs XGrammar and llguidance in one run.

For each grammar of the set (llama.cpp's json, arithmetic, c, chess and list
GBNF grammars, read from the llama-cpp-python sdist, Lark grammars of
tests/python/data/lark, and a regex set), every
engine compiles the grammar (compile time, one thread) and walks the same
texts token by token (Llama-3.1 vocabulary, `tokenizers` without special
tokens), timing every mask fill. Texts are random derivations drawn by
tests/python/gbnf_oracle.py and lark_oracle.py (fixed seed), so they are
sentences of the grammar (Lark: as lark's Earley parser reads it). One JSON
line per engine and grammar; mask avg/p99/max in µs.

XGrammar takes the GBNF text through compile_grammar (its EBNF reads GBNF),
and has no Lark front-end; llguidance takes GBNF through its own
gbnf_to_lark conversion, and Lark directly (grammar_from_lark, its lexer
reading; `accepted` counts the texts it reads the way lark does).
nextok runs through `nextok grammar-generate --walk --timing` (a process
per grammar, C++ timings); `--engines nextok-py` runs it through its Python
package in this process, timed as the anchors are.

    VENV/bin/python bench/grammar_anchor.py --cli build/rel/tools/nextok \\
        --tokenizer build/rel/tokenizers/llama3.1 --sdist build/rel/fixtures/llama_cpp_python-0.3.36.tar.gz

VENV: pip install xgrammar llguidance lark tokenizers transformers torch numpy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from gbnf_oracle import Gbnf, Sampler, accepts, recogniser  # noqa: E402
from lark_oracle import LarkSampler  # noqa: E402

EOS_IDS = (128001, 128008, 128009)
GBNF_SET = ["json", "arithmetic", "c", "chess", "list"]
LARK_DIR = ROOT / "tests" / "python" / "data" / "lark"
LARK_SET = ["arith", "json", "config", "csv", "chess", "sql"]
REGEX_SET = {
    "phone": (r"\(\d{3}\) \d{3}-\d{4}", ["(555) 123-4567", "(800) 000-9999"]),
    "email": (
        r"[a-z0-9._]{1,20}@[a-z0-9]{1,12}\.(com|org|net)",
        ["john.doe@example.com", "a_b@x.org"],
    ),
    "date": (r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])", ["2024-02-29", "1999-12-31"]),
    "number": (r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?", ["-12.5e+10", "0", "31415926"]),
    "words": (r"[A-Z][a-z]+( [a-z]+){0,12}\.", ["The quick brown fox jumps over the lazy dog."]),
}


def stats(xs: list[float]) -> dict:
    if not xs:
        return {}
    s = sorted(xs)
    return {
        "mask_avg_us": round(sum(s) / len(s), 1),
        "mask_p99_us": round(s[min(len(s) - 1, math.ceil(0.99 * len(s)) - 1)], 1),
        "mask_max_us": round(s[-1], 1),
        "masks": len(s),
    }


def passes_stats(per_text: list[list[float]], passes: int) -> dict:
    """Mask statistics of the first pass over the texts; with two passes the
    second (the same texts again, new matchers of the same compiled grammar,
    as a server sees repeated requests) is reported as warm_*."""
    n = len(per_text) // passes
    first = stats([t for x in per_text[:n] for t in x])
    if passes == 1:
        return first
    warm = stats([t for x in per_text[n:] for t in x])
    return {
        **first,
        **{
            "warm_" + k[len("mask_") :]: v
            for k, v in warm.items()
            if k.startswith("mask_") and k != "masks"
        },
    }


def first_mask_ms(compile_ms: float, per_text: list[list[float]]) -> dict:
    """Compile time, and the time from the grammar's text to its first mask:
    engines differ in what they do at compile time (nextok makes the start
    state's mask there, XGrammar the masks it can), so the sum is the
    figure that compares alike."""
    first = per_text[0][0] / 1000 if per_text and per_text[0] else 0.0
    return {"compile_ms": round(compile_ms, 2), "first_mask_ms": round(compile_ms + first, 2)}


class Nextok:
    name = "nextok"
    passes = 1

    def __init__(self, cli: str, tokenizer_dir: str):
        self.cli, self.tok = cli, tokenizer_dir

    def run(self, kind: str, source: str, texts: list[str]) -> dict:
        with tempfile.TemporaryDirectory() as d:
            walk = Path(d) / "texts.jsonl"
            walk.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
            g = Path(d) / ("g.lark" if kind == "lark" else "g.gbnf")
            flags = ["--regex", source] if kind == "regex" else ["--grammar", str(g)]
            if kind != "regex":
                g.write_text(source, encoding="utf-8")
            out = subprocess.run(
                [
                    self.cli,
                    "grammar-generate",
                    "--tokenizer",
                    self.tok,
                    *flags,
                    "--walk",
                    str(walk),
                    "--timing",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        lines = [json.loads(x) for x in out.split("\n") if x.strip()]
        per_text = [x["mask_us"] for x in lines[1:]]
        return {
            **first_mask_ms(lines[0]["compiled_ms"], per_text),
            "accepted": sum(x["accepted"] for x in lines[1 : len(texts) // self.passes + 1]),
            **passes_stats(per_text, self.passes),
        }


class Walker:
    """The anchors' common token-by-token walk."""

    passes = 1

    def run(self, kind: str, source: str, texts: list[str]) -> dict:
        t0 = time.perf_counter()
        compiled = self.compile(kind, source)
        compile_ms = (time.perf_counter() - t0) * 1000
        per_text, accepted = [], 0
        for n, text in enumerate(texts):
            times: list[float] = []
            per_text.append(times)
            ids = self.tokenizer.encode(text, add_special_tokens=False).ids
            m = self.start(compiled)
            ok = True
            for at in range(len(ids) + 1):
                t = time.perf_counter()
                mask = self.fill(m)
                times.append((time.perf_counter() - t) * 1e6)
                want = EOS_IDS[-1] if at == len(ids) else ids[at]
                if not (mask[want >> 5] >> (want & 31)) & 1:
                    ok = False
                    break
                if at < len(ids):
                    self.consume(m, ids[at])
            accepted += ok if n < len(texts) // self.passes else 0
        return {
            **first_mask_ms(compile_ms, per_text),
            "accepted": accepted,
            **passes_stats(per_text, self.passes),
        }


class XGrammar(Walker):
    name = "xgrammar"

    def __init__(self, tokenizer_path: str, vocab_size: int):
        import transformers
        import xgrammar

        self.xgr = xgrammar
        self.tokenizer = Tokenizer.from_file(tokenizer_path)
        hf = transformers.PreTrainedTokenizerFast(tokenizer_file=tokenizer_path)
        info = xgrammar.TokenizerInfo.from_huggingface(
            hf, vocab_size=vocab_size, stop_token_ids=list(EOS_IDS)
        )
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.bitmask = xgrammar.allocate_token_bitmask(1, vocab_size)

    def compile(self, kind, source):
        if kind == "lark":
            raise ValueError("XGrammar reads EBNF (GBNF), not Lark")
        return (
            self.compiler.compile_regex(source)
            if kind == "regex"
            else self.compiler.compile_grammar(source)
        )

    def start(self, compiled):
        return self.xgr.GrammarMatcher(compiled)

    def fill(self, m):
        m.fill_next_token_bitmask(self.bitmask)
        return self.bitmask[0].numpy().view(np.uint32)

    def consume(self, m, token):
        m.accept_token(token)


class NextokPy(Walker):
    """nextok through its Python package, in this process like the anchors:
    the same Python call around each mask, and a process whose caches the
    earlier grammars' walks have warmed (the CLI row starts a process per
    grammar, so its first mask also reads the trie from a cold cache)."""

    name = "nextok-py"

    def __init__(self, tokenizer_dir: str):
        import nextok

        self.nx = nextok
        self.tokenizer = Tokenizer.from_file(str(Path(tokenizer_dir) / "tokenizer.json"))
        self.info = nextok.TokenizerInfo.from_path(tokenizer_dir)
        self.mask = np.zeros(nextok.bitmask_words(self.info.vocab_size), dtype=np.int32)
        # The vocabulary's token index is built on first use; build it here,
        # as the anchors build their tokenizer tables in __init__.
        nextok.Grammar.regex("a", self.info)

    def compile(self, kind, source):
        g = self.nx.Grammar
        if kind == "regex":
            return g.regex(source, self.info)
        return g.lark(source, self.info) if kind == "lark" else g.gbnf(source, self.info)

    def start(self, compiled):
        return self.nx.Matcher(compiled)

    def fill(self, m):
        m.fill_next_token_bitmask(self.mask)
        return self.mask.view(np.uint32)

    def consume(self, m, token):
        m.accept_token(token)


class Llguidance(Walker):
    name = "llguidance"

    def __init__(self, tokenizer_path: str, vocab_size: int):
        import llguidance
        from llguidance.gbnf_to_lark import gbnf_to_lark

        self.llg = llguidance
        self.to_lark = gbnf_to_lark
        self.tokenizer = Tokenizer.from_file(tokenizer_path)
        self.tok = llguidance.LLTokenizer(
            Path(tokenizer_path).read_text(encoding="utf-8"),
            n_vocab=vocab_size,
            eos_token=list(EOS_IDS),
        )
        self.mask = np.zeros((vocab_size + 31) // 32, dtype=np.uint32)

    def compile(self, kind, source):
        if kind == "regex":
            g = self.llg.LLMatcher.grammar_from_regex(source)
        else:
            g = self.llg.LLMatcher.grammar_from_lark(
                source if kind == "lark" else self.to_lark(source)
            )
        m = self.llg.LLMatcher(self.tok, g, log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def start(self, compiled):
        return compiled.deep_copy()

    def fill(self, m):
        m.unsafe_compute_mask_ptr(self.mask.ctypes.data, self.mask.nbytes)
        return self.mask

    def consume(self, m, token):
        m.consume_token(token)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cli", required=True)
    ap.add_argument("--tokenizer", required=True, help="directory with tokenizer.json (Llama-3.1)")
    ap.add_argument("--sdist", required=True, help="llama_cpp_python-0.3.36.tar.gz")
    ap.add_argument("--texts", type=int, default=20, help="texts per grammar")
    ap.add_argument("--engines", default="nextok,xgrammar,llguidance")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="walk the texts twice per compiled grammar and report the second pass as warm_*",
    )
    a = ap.parse_args()
    tok_json = str(Path(a.tokenizer) / "tokenizer.json")
    vocab_size = Tokenizer.from_file(tok_json).get_vocab_size(with_added_tokens=True)
    grammars = {}
    with tarfile.open(a.sdist) as tar:
        for m in tar.getmembers():
            p = Path(m.name)
            if p.suffix == ".gbnf" and p.parent.name == "grammars" and p.stem in GBNF_SET:
                grammars[p.stem] = tar.extractfile(m).read().decode("utf-8")
    work = []
    for name in GBNF_SET:
        text = grammars[name]
        lark = recogniser(text)
        sampler = Sampler(Gbnf.parse(text), seed=1, depth=8)
        texts = [s for s in (sampler.sample() for _ in range(a.texts)) if accepts(lark, s)]
        work.append((name, "gbnf", text, texts))
    for name in LARK_SET:
        text = (LARK_DIR / f"{name}.lark").read_text(encoding="utf-8")
        sampler = LarkSampler(text, seed=1)
        work.append((f"lark:{name}", "lark", text, [sampler.sample() for _ in range(a.texts)]))
    for name, (pattern, texts) in REGEX_SET.items():
        work.append((f"regex:{name}", "regex", pattern, texts))
    engines = []
    for e in a.engines.split(","):
        if e == "nextok":
            engines.append(Nextok(a.cli, a.tokenizer))
        elif e == "nextok-py":
            engines.append(NextokPy(a.tokenizer))
        elif e == "xgrammar":
            engines.append(XGrammar(tok_json, vocab_size))
        elif e == "llguidance":
            engines.append(Llguidance(tok_json, vocab_size))
    passes = 2 if a.warm else 1
    for eng in engines:
        eng.passes = passes
    for name, kind, source, texts in work:
        for eng in engines:
            try:
                r = eng.run(kind, source, texts * passes)
            except Exception as ex:  # noqa: BLE001 - an anchor's failure is a row, not a crash
                r = {"error": str(ex)[:200]}
            print(
                json.dumps({"grammar": name, "impl": eng.name, "texts": len(texts), **r}),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
