"""The grammar engine (GBNF, regex, choice) against independent oracles.

GBNF: the grammars llama.cpp ships, read from the llama-cpp-python sdist
(pinned in requirements.txt; `pip download` puts it in the build tree, never
in the repository). Each grammar is read by gbnf_oracle.py's own parser and
recognised by lark's Earley parser.
  - soundness: random-logit generations (`nextok grammar-generate`) that end
    with EOS must parse with lark, and no walk may reach a dead end;
  - completeness: sentences drawn by an independent random derivation must be
    accepted token by token, EOS at the end, with the Llama-3.1 and Qwen3
    vocabularies.
Regex: generations must full-match with Python `re` (ASCII flag: ECMA-262's
\\d \\w \\s are ASCII); strings drawn by hypothesis' from_regex must be accepted.
Choice: outputs are among the strings, and each string is accepted.

NEXTOK_GRAMMAR_ORACLE_COUNT scales the generations per grammar (CI runs a
slice; docs/constraint-engine.md gives the full command and its figures).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tarfile
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from conftest import missing_fixture  # noqa: E402
from gbnf_oracle import Gbnf, Sampler, accepts, engine_lines, generate, recogniser, walk  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers"))
FIXTURES = pathlib.Path(os.environ.get("NEXTOK_GRAMMAR_FIXTURES", ROOT / "build" / "dev" / "fixtures"))
SDIST = "llama_cpp_python-0.3.36.tar.gz"
COUNT = int(os.environ.get("NEXTOK_GRAMMAR_ORACLE_COUNT", "12"))
GRAMMARS = ["arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list"]
# Bytes that end what a grammar opens: walks prefer their tokens now and then,
# so that more of them end (with EOS) within the token limit.
CLOSE = {"arithmetic": "=\n", "c": "});", "chess": "\n", "english": "", "japanese": "",
         "json": "\"}]", "json_arr": "\"}]", "list": "\n"}


def tokenizer(name: str) -> str:
    d = TOKENIZERS / name
    if not (d / "tokenizer.json").exists():
        missing_fixture(f"tokenizer {d}")
    return str(d)


@pytest.fixture(scope="session")
def shipped(tmp_path_factory) -> dict[str, pathlib.Path]:
    """llama.cpp's grammars, unpacked from the sdist into a temporary folder."""
    sdist = FIXTURES / SDIST
    if not sdist.exists():
        FIXTURES.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "llama-cpp-python==0.3.36", "-d", str(FIXTURES)], capture_output=True, timeout=600)
    if not sdist.exists():
        missing_fixture(f"{sdist} (pip download llama-cpp-python==0.3.36 --no-binary :all:)")
    out = tmp_path_factory.mktemp("gbnf")
    found = {}
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            p = pathlib.PurePosixPath(m.name)
            if p.suffix == ".gbnf" and p.parent.name == "grammars" and "vendor/llama.cpp" in m.name:
                path = out / p.name
                path.write_bytes(tar.extractfile(m).read())
                found[p.stem] = path
    for name in GRAMMARS:
        if name not in found:
            missing_fixture(f"{name}.gbnf in {sdist}")
    return found


@pytest.mark.parametrize("name", GRAMMARS)
def test_shipped_grammar_generations_parse_with_lark(cli, shipped, name):
    path = shipped[name]
    lark = recogniser(path.read_text(encoding="utf-8"))
    gens = generate(cli, tokenizer("llama3.1"), ["--grammar", str(path), "--stop-p", "0.9"], COUNT,
                    seed=11, max_tokens=64, close=CLOSE[name])
    assert len(gens) == COUNT
    assert not [g for g in gens if g.get("dead_end")]
    complete = [g["text"] for g in gens if g["complete"]]
    unsound = [t for t in complete if not accepts(lark, t)]
    assert not unsound, unsound[:3]
    # The check only bites if walks end: enough of them must (identifiers and
    # free text absorb most random tokens, so in some grammars few end).
    # arithmetic.gbnf ends a walk rarely (a line needs "=" then "\n" while
    # identifiers take almost any token): its full run has the figures.
    want = 0 if name == "arithmetic" and COUNT < 100 else max(1, COUNT // 20)
    assert len(complete) >= want, (len(complete), [g["text"][:80] for g in gens[:3]])


@pytest.mark.parametrize("vocab", ["llama3.1", "qwen3"])
@pytest.mark.parametrize("name", GRAMMARS)
def test_shipped_grammar_samples_are_accepted(cli, shipped, name, vocab):
    text = shipped[name].read_text(encoding="utf-8")
    lark = recogniser(text)
    sampler = Sampler(Gbnf.parse(text), seed=hash(name) % 1000, depth=8)
    texts = []
    for _ in range(COUNT):
        s = sampler.sample()
        assert accepts(lark, s), f"the oracle's own sample does not parse: {s!r}"
        texts.append(s)
    walks = walk(cli, tokenizer(vocab), ["--grammar", str(shipped[name])], texts)
    assert len(walks) == len(texts)
    refused = [(texts[w["i"]], w) for w in walks if not w["accepted"]]
    assert not refused, refused[:3]


REGEXES = [
    r"[a-z]{3,8}",
    r"\d{3}-\d{4}",
    r"(a|aa)*b",
    r"(x+x+)+y",
    r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?",
    r"[A-Z][a-z]+( [A-Z][a-z]+){0,3}",
    r"(true|false|null)",
    r"\w{1,8}@[a-z]{1,8}\.(com|org|net)",
    r"[^\n\r]{1,20}",
    r"(ab|cd|ef){2,5}x?",
    r"\([0-9]{1,3}(, [0-9]{1,3}){0,4}\)",
    r"(é|ü|中){2,4}",
]


@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_generations_fullmatch_python_re(cli, pattern):
    gens = generate(cli, tokenizer("llama3.1"), ["--regex", pattern], COUNT, seed=5, max_tokens=24,
                    close="@.)x")
    assert not [g for g in gens if g.get("dead_end")]
    rx = re.compile(pattern, re.ASCII)
    bad = [g["text"] for g in gens if g["complete"] and not rx.fullmatch(g["text"])]
    assert not bad, bad[:3]
    assert any(g["complete"] for g in gens)


@pytest.mark.parametrize("vocab", ["llama3.1", "qwen3"])
@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_samples_are_accepted(cli, pattern, vocab):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    texts: list[str] = []
    flags = re.ASCII if pattern.isascii() else 0  # hypothesis refuses non-ASCII literals under re.ASCII

    @settings(max_examples=COUNT, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.from_regex(re.compile(pattern, flags), fullmatch=True))
    def draw(s):
        texts.append(s)

    draw()
    texts = [t for t in texts if re.fullmatch(pattern, t, flags)]
    walks = walk(cli, tokenizer(vocab), ["--regex", pattern], texts)
    refused = [texts[w["i"]] for w in walks if not w["accepted"]]
    assert not refused, refused[:3]


def test_choice_sound_and_complete(cli):
    strings = ["yes", "no", "maybe", "not sure", "no way", "yes!"]
    flags = ["--choice", ",".join(strings)]
    for vocab in ("llama3.1", "qwen3"):
        gens = generate(cli, tokenizer(vocab), flags, max(COUNT, 50), seed=3)
        assert {g["text"] for g in gens if g["complete"]} <= set(strings)
        assert all(g["complete"] for g in gens)
        walks = walk(cli, tokenizer(vocab), flags, strings)
        assert all(w["accepted"] for w in walks), walks


def compile_result(cli, flags: list[str], timeout: float = 60) -> tuple[dict, float]:
    t0 = time.monotonic()
    r = subprocess.run([cli, "grammar-generate", "--tokenizer", tokenizer("llama3.1"), *flags, "--count", "3"],
                       capture_output=True, text=True, timeout=timeout)
    first = json.loads(r.stdout.splitlines()[0])
    return first, time.monotonic() - t0


def test_hostile_grammars(cli, tmp_path):
    # Left recursion works (llama.cpp refuses it).
    g = tmp_path / "left.gbnf"
    g.write_text('root ::= expr\nexpr ::= expr "+" num | num\nnum ::= [0-9]{1,3}\n')
    lark = recogniser(g.read_text())
    gens = generate(cli, tokenizer("llama3.1"), ["--grammar", str(g)], 20, seed=1)
    assert all(accepts(lark, x["text"]) for x in gens if x["complete"])
    # An empty language is a clear error.
    g.write_text('root ::= a\na ::= "x" a\n')
    res, _ = compile_result(cli, ["--grammar", str(g)])
    assert "language is empty" in res["error"] and res["param"] == "grammar"
    # A syntax error names line and column.
    g.write_text('root ::= "a"\nb ::= (c\n')
    res, _ = compile_result(cli, ["--grammar", str(g)])
    assert res["error"].startswith("3:1: expecting ')'"), res
    # A huge alternation: past the node limit, a clear error, quickly.
    g.write_text("root ::= " + " | ".join(f'"w{k}"' for k in range(100000)) + "\n")
    res, secs = compile_result(cli, ["--grammar", str(g)])
    assert "max_grammar_nodes" in res["error"] and secs < 30
    # Exponential regexes: a DFA, bounded time, correct outputs.
    for pattern in [r"(a|aa)*b", r"(x+x+)+y", r"(a*)*b", r"((a|b)*c){1,5}"]:
        t0 = time.monotonic()
        gens = generate(cli, tokenizer("llama3.1"), ["--regex", pattern], 10, seed=2)
        assert time.monotonic() - t0 < 60
        assert all(re.fullmatch(pattern, x["text"]) for x in gens if x["complete"])
    # Lookaround is unsupported, clearly.
    res, _ = compile_result(cli, ["--regex", "a(?=b)"])
    assert "error" in res and res["param"] == "pattern"
