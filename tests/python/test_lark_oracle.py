"""The grammar engine's Lark front-end against lark itself.

The language of a `.lark` grammar is what lark's Earley parser with
`lexer="dynamic_complete"` accepts from `start` (regex terminals in Python
`re` semantics, `%ignore`d terminals between any two terminals and at both
ends). The grammars are tests/python/data/lark/*.lark; lark_oracle.py draws
sentences from them using only lark to read them.
  - soundness: random-logit generations (`nextok grammar-generate`) that end
    with EOS must parse with lark, and no walk may reach a dead end;
  - completeness: sampled sentences (each checked with lark first) must be
    accepted token by token, EOS at the end, with the Llama-3.1 and Qwen3
    vocabularies;
  - exactness: small edits of sampled sentences are accepted exactly when
    lark accepts them;
  - `%import common.X`: lark's definition of each common terminal against
    the engine's, both ways, in a grammar `start: X`;
  - probes: lark's reading of corners of the dialect (ignores at the edges,
    Unicode classes and case folding, literal escapes, flags), each text's
    verdict taken from lark; and the documented differences (docs/
    constraint-engine.md, "Lark"), pinned text by text: where lark's lexer
    takes a lazy or first-alternative match, the engine reads the regular
    language and accepts more;
  - errors: unsupported constructs and malformed grammars give a JSON error
    line naming the parameter (and line:column where there is one).

NEXTOK_GRAMMAR_ORACLE_COUNT scales the generations and samples per grammar.
"""

from __future__ import annotations

import json
import pathlib
import random
import re
import sys
import zlib

import pytest
from lark.exceptions import LarkError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gbnf_oracle import engine_lines, generate, walk  # noqa: E402
from lark_oracle import LarkSampler, RegexSampler, accepts, mutants, parser  # noqa: E402
from test_grammar_oracle import COUNT, compile_result, tokenizer  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data" / "lark"
GRAMMARS = ["arith", "chess", "commons", "config", "csv", "flags", "json", "sexpr", "sql", "templates",
            "terms"]
# Bytes that end what a grammar opens: walks prefer their tokens now and then.
CLOSE = {"arith": ")", "chess": "", "commons": "\n\"", "config": "\n", "csv": ",\n",
         "flags": ";>", "json": "\"}]", "sexpr": ")]\"", "sql": ";", "templates": "],",
         "terms": ".,"}


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode()) % 10000


def grammar_file(name: str) -> pathlib.Path:
    return DATA / f"{name}.lark"


def verdicts(cli: str, vocab: str, path: pathlib.Path, texts: list[str]) -> dict[str, bool]:
    walks = walk(cli, tokenizer(vocab), ["--grammar", str(path)], texts)
    assert len(walks) == len(texts), walks[-3:]
    return {texts[w["i"]]: w["accepted"] for w in walks}


@pytest.mark.parametrize("name", GRAMMARS)
def test_lark_generations_parse_with_lark(cli, name):
    path = grammar_file(name)
    lark = parser(path.read_text(encoding="utf-8"))
    gens = generate(cli, tokenizer("llama3.1"), ["--grammar", str(path)], COUNT, seed=seed_of(name),
                    max_tokens=48, close=CLOSE[name])
    assert len(gens) == COUNT
    assert not [g for g in gens if g.get("dead_end")]
    complete = [g["text"] for g in gens if g["complete"]]
    unsound = [t for t in complete if not accepts(lark, t)]
    assert not unsound, unsound[:3]
    assert complete, [g["text"][:80] for g in gens[:3]]


@pytest.mark.parametrize("vocab", ["llama3.1", "qwen3"])
@pytest.mark.parametrize("name", GRAMMARS)
def test_lark_samples_are_accepted(cli, name, vocab):
    path = grammar_file(name)
    sampler = LarkSampler(path.read_text(encoding="utf-8"), seed=seed_of(name + vocab))
    texts = []
    for _ in range(COUNT):
        s = sampler.sample()
        assert accepts(sampler.lark, s), f"the oracle's own sample does not parse: {s!r}"
        texts.append(s)
    got = verdicts(cli, vocab, path, texts)
    refused = [t for t in texts if not got[t]]
    assert not refused, refused[:3]


@pytest.mark.parametrize("name", GRAMMARS)
def test_lark_edits_agree_with_lark(cli, name):
    path = grammar_file(name)
    sampler = LarkSampler(path.read_text(encoding="utf-8"), seed=seed_of(name) + 1)
    rng = random.Random(seed_of(name))
    edits = sorted({m for _ in range(COUNT) for m in mutants(sampler.sample(), rng, 3)})
    want = {t: accepts(sampler.lark, t) for t in edits}
    got = verdicts(cli, "llama3.1", path, edits)
    wrong = [(t, "lark", want[t], "engine", got[t]) for t in edits if got[t] != want[t]]
    assert not wrong, wrong[:4]
    assert not all(want.values())  # the check bites on edits lark refuses


# common.lark's public terminals (lark/grammars/common.lark).
COMMON = ["DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "FLOAT", "SIGNED_FLOAT", "NUMBER",
          "SIGNED_NUMBER", "ESCAPED_STRING", "LCASE_LETTER", "UCASE_LETTER", "LETTER", "WORD",
          "CNAME", "WS_INLINE", "WS", "CR", "LF", "NEWLINE", "SH_COMMENT", "CPP_COMMENT",
          "C_COMMENT", "SQL_COMMENT"]


@pytest.mark.parametrize("name", COMMON)
def test_common_terminal_agrees_with_lark(cli, tmp_path, name):
    text = f"start: {name}\n%import common.{name}\n"
    path = tmp_path / f"{name.lower()}.lark"
    path.write_text(text)
    lark = parser(text)
    rx = re.compile(next(t for t in lark.terminals if t.name == name).pattern.to_regexp())
    rng = random.Random(seed_of(name))
    draws = RegexSampler(rng, wide_p=0.15)
    samples = sorted({draws.draw(rx) for _ in range(2 * COUNT)})
    edits = sorted({m for s in samples for m in mutants(s, rng, 2)} - set(samples))
    texts = samples + edits
    want = {t: accepts(lark, t) for t in texts}
    assert all(want[s] for s in samples), [s for s in samples if not want[s]][:3]
    walk_file = tmp_path / "walk.jsonl"
    walk_file.write_text("".join(json.dumps(t) + "\n" for t in texts))
    lines = engine_lines(cli, tokenizer("llama3.1"), [
        "--grammar", str(path), "--count", str(COUNT), "--seed", str(seed_of(name)),
        "--max-tokens", "24", "--close-bytes", "\"/\n", "--close-p", "0.6", "--walk", str(walk_file)])
    gens = [x for x in lines if "complete" in x]
    walks = [x for x in lines if "accepted" in x]
    assert len(gens) == COUNT and len(walks) == len(texts)
    assert not [g for g in gens if g.get("dead_end")]
    unsound = [g["text"] for g in gens if g["complete"] and not accepts(lark, g["text"])]
    assert not unsound, unsound[:3]
    wrong = [(texts[w["i"]], "lark", want[texts[w["i"]]], "engine", w["accepted"])
             for w in walks if w["accepted"] != want[texts[w["i"]]]]
    assert not wrong, wrong[:4]


# Where the engine reads a regex as its regular language and lark's lexer
# does not: (grammar, texts, the texts lark refuses and the engine accepts).
DIFFERENCES = {
    # lark's lazy quantifier ends at its first chance.
    "lazy_quantifier": ('start: BLOCK "x"?\nBLOCK: /\\/\\*.*?\\*\\//s\n',
                        ["/**/", "/* a */", "/* a */ b */", "/* a */x", "/*\n*/", "/* */*/", "/***/", "/*/"],
                        {"/* a */ b */", "/* */*/"}),
    # Python re tries alternatives in order: lark reads /a|ab/ as "a" only.
    "alternation_order": ("start: T\nT: /a|ab/\n", ["a", "ab"], {"ab"}),
}


@pytest.mark.parametrize("probe", sorted(DIFFERENCES))
def test_lark_documented_differences(cli, tmp_path, probe):
    text, texts, more = DIFFERENCES[probe]
    path = tmp_path / f"{probe}.lark"
    path.write_text(text, encoding="utf-8")
    lark = parser(text)
    want = {t: accepts(lark, t) or t in more for t in texts}
    assert not any(accepts(lark, t) for t in more), "lark accepts a text listed as a difference"
    got = verdicts(cli, "llama3.1", path, texts)
    wrong = [(t, "lark", accepts(lark, t), "engine", got[t]) for t in texts if got[t] != want[t]]
    assert not wrong, wrong


# Corners of lark's reading: each text's verdict comes from lark.
PROBES = {
    # An ignored terminal is matched once, greedily: "#cb" is all comment.
    "ignore_greedy": ('start: "a" "b"\n%ignore /#[^\\n]*/\n%ignore "\\n"\n',
                      ["ab", "a#c\nb", "a#cb", "#x\nab", "ab#x", "a\n#c\n\nb", "a#c#d\nb", "#", "a#\nb\n#"]),
    # A whitespace run is one ignored token: a tab after spaces is part of it.
    "ignore_greedy_classes": ('start: W+\nW: /[a-c]+/ | "\\t"\n%import common.WS\n%ignore WS\n',
                              ["\t", " \t", "a \t", "a\t", "\ta", " a", "a ", "\t\t", "a \tb", "a\t b"]),
    # Ignored terminals at both ends, around an empty sentence, and alone.
    "ignore_edges": ('start: "a"+ "b"?\n%ignore " "\n', [" a", "a ", " ", "", " a a ", "aa", "a  a", "a b ", "ab a"]),
    "ignore_empty": ('start: "a"?\n%ignore " "\n', ["", " ", "  ", "a", " a ", "aa"]),
    # Python's Unicode \d \w \s, and `.` without /s.
    "unicode_classes": ('start: "d" /\\d+/ | "w" /\\w+/ | "s" /\\s+/ | "." /./ | "D" /\\D/ | "W" /\\W/\n',
                        ["d٣", "d१२", "d7", "wé", "w中文", "w_9", "s\u2003", "s\x1c", "s\u00a0", "s\x85", ".\r",
                         ".\n", ".😀", "D٣", "Dx", "W-", "Wé", "w-"]),
    # Python's case folding under /i and "..."i.
    "case_folding": ('start: "k"i | "s"i | "x" /[a-c]+/i | "y" /[^a-z]/i\n',
                     ["k", "K", "\u212a", "s", "S", "\u017f", "xABC", "xaBc", "xd", "yA", "y1", "y\u212a"]),
    # Escapes in string and regex literals.
    "literal_escapes": (('start: "tab\\there" | "nl\\n" | "q\\"" | "bs\\\\" | "\\x41" | "\\u00e9" | /\\// | /\\x42/'
                         ' | /[\\]]/ | "it\'s"\n'),
                        ["tab\there", "tab\\there", "nl\n", "nl\\n", 'q"', "bs\\", "bs\\\\", "A", "\\x41", "é",
                         "/", "B", "]", "it's"]),
    "repetition": ('start: "a" ~ 2..3 | "b" ~ 2 | ("c" | "d") ~ 1..2 "e"\n',
                   ["a", "aa", "aaa", "aaaa", "b", "bb", "bbb", "ce", "cde", "dde", "e", "cdce"]),
    "ranges": ('start: ("a".."c" | "x".."z" | "α".."ω")+ "0".."9"\n',
               ["a0", "abcxyz9", "d0", "w1", "a", "zz5", "αω1", "λ2", "Ω3", "ά4"]),
    # Regex flags, alone and together, and the i flag on part of a terminal.
    "regex_flags": ('start: "1" /a.b/is | "2" /a.b/ | "3" /a.b/s | "4" T\nT: "ab"i "c"\n',
                    ["1A\nB", "1a\rb", "2a\nb", "2a\rb", "2A-b", "3a\nb", "3A\nb", "4ABc", "4aBc", "4abC"]),
    # Python's inline flags inside a regex literal.
    "inline_flags": ('start: "1" /(?i:ab)c/ | "2" /(?s)a.b/ | "3" /(?i)xy/\n',
                     ["1ABc", "1abC", "2a\nb", "3XY", "3xY", "3x"]),
    # Ignored terminals stand between terminals, never inside one.
    "ignore_between_terminals_only": ('start: "ab" T\nT: "c" "d"\n%ignore " "\n',
                                      ["abcd", "ab cd", "a bcd", "abc d", " ab cd ", "ab  cd"]),
    # %override replaces a definition made above it, %extend adds alternatives,
    # in any order and for rules, terminals and templates alike.
    "override_extend": (('start: x T y{"a"}\nx: "a"\nT: "t"\ny{p}: p\n%extend x: "b" | "c"\n%override T: "u"\n'
                         '%extend T: "v"\n%override x: "d"\n%extend x: "e"\n%override y{q}: q q\n'
                         '%extend y{q}: "z"\n'),
                        ["dtaa", "duaa", "dvaa", "euaa", "evz", "auaa", "buaa", "cva", "dva", "ez", "du"]),
    # %declare: a terminal an outside lexer would give, so nothing matches it
    # here, unless %override gives it a pattern; ignores still stand around it.
    "declare": ('start: "a" A? B? "b"\n%declare A B\n%override B: "x"\n%ignore " "\n',
                ["ab", "a b", "axb", "a x b", "aAb", "a", "ax"]),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_lark_probe_agrees_with_lark(cli, tmp_path, probe):
    text, texts = PROBES[probe]
    path = tmp_path / f"{probe}.lark"
    path.write_text(text, encoding="utf-8")
    lark = parser(text)
    want = {t: accepts(lark, t) for t in texts}
    got = verdicts(cli, "llama3.1", path, texts)
    wrong = [(t, "lark", want[t], "engine", got[t]) for t in texts if got[t] != want[t]]
    assert not wrong, wrong


# (grammar, param, lines the message may name, a word it must hold, whether lark refuses it too)
ERRORS = {
    "template_arity": ('start: pair{"a"}\npair{x, y}: x y\n', "grammar", {1}, "template", True),
    "override_undefined": ('start: "a"\n%override nope: "b"\n', "grammar", {2}, "nope", True),
    "extend_undefined": ('start: "a"\n%extend nope: "b"\n', "grammar", {2}, "nope", True),
    "extend_declared": ('start: "a" A?\n%declare A\n%extend A: "c"\n', "grammar", {3}, "declared", True),
    "declare_twice": ('start: "a" A?\n%declare A\nA: "b"\n', "grammar", {3}, "twice", True),
    "extend_template_params": ('start: x{"a"}\nx{p}: p\n%extend x{q}: "b" q\n', "grammar", {3}, "parameters",
                               True),
    # lark fails with an AssertionError of its own here, not a grammar error.
    "declared_in_terminal": ('start: "a" T?\nT: A "x"\n%declare A\n', "grammar", {2}, "declared", False),
    "lookahead": ('start: /a(?=b)/ "b"\n', "pattern", set(), "", False),
    "lookbehind": ('start: "b" /(?<=b)a/\n', "pattern", set(), "", False),
    "backreference": ('start: /(a)\\1/\n', "pattern", set(), "", False),
    "undefined_rule": ('start: a\na: "x" missing\n', "grammar", {2}, "missing", True),
    "undefined_terminal": ('start: "x"\n    | NOPE\n', "grammar", {2}, "NOPE", True),
    "unclosed_group": ('start: "a"\nb: ("c" "d"\n', "grammar", {2, 3}, "", True),
    "missing_colon": ('start: "a"\nb "c"\n', "grammar", {2}, "", True),
    "unknown_import": ('start: NOPE\n%import common.NOPE\n', "grammar", {1, 2}, "NOPE", True),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_lark_grammar_errors(cli, tmp_path, case):
    text, param, lines, word, lark_refuses = ERRORS[case]
    if lark_refuses:
        with pytest.raises(LarkError):
            parser(text)
    path = tmp_path / f"{case}.lark"
    path.write_text(text)
    res, secs = compile_result(cli, ["--grammar", str(path)])
    assert "error" in res and res["param"] == param, res
    assert word in res["error"], res
    if lines:
        at = re.search(r"\b(\d+):(\d+)\b", res["error"])
        assert at and int(at.group(1)) in lines, res
    assert secs < 30


def test_lark_ignored_whitespace_stays_fast(cli, tmp_path):
    # A long run of ignored whitespace splits into WS terminals in many ways,
    # but its language is one regular set: no mask may grow with its length
    # (a GBNF `[ \t\n]*` takes well under a millisecond a mask here).
    path = tmp_path / "ws.lark"
    path.write_text('start: "a"\n%import common.WS\n%ignore WS\n')
    texts = [" " * 400 + "a", "a" + "\n" * 300]
    walk_file = tmp_path / "walk.jsonl"
    walk_file.write_text("".join(json.dumps(t) + "\n" for t in texts))
    walks = [x for x in engine_lines(cli, tokenizer("llama3.1"), ["--grammar", str(path), "--walk", str(walk_file),
                                                                  "--timing"]) if "accepted" in x]
    assert [w["accepted"] for w in walks] == [True] * len(texts)
    slow = [(w["i"], round(max(w["mask_us"]) / 1000, 1)) for w in walks if max(w["mask_us"]) > 50_000]
    assert not slow, f"(text, slowest mask in ms): {slow}"


def test_lark_dispatch_by_suffix(cli, tmp_path):
    # The same text is Lark in a .lark file and GBNF (a syntax error) otherwise.
    gbnf = tmp_path / "arith.gbnf"
    gbnf.write_text(grammar_file("arith").read_text(encoding="utf-8"))
    res, _ = compile_result(cli, ["--grammar", str(gbnf)])
    assert "error" in res and res["param"] == "grammar", res
    res, _ = compile_result(cli, ["--grammar", str(grammar_file("arith"))])
    assert "compiled_ms" in res, res
