"""Two pattern features past the plain ECMA-262 subset, each against real
engines on cases of its own making.

Unicode property classes (\\p{...}, \\P{...}) against ECMA-262's
u-mode reading (the `regress` engine): random patterns built from property
classes (alone, negated, inside classes beside other members, in
patternProperties), random strings drawn from every general category, every
verdict from regress. Each string must be accepted token by token exactly
when regress matches it. Code points are those Python's Unicode tables
assign, and whose category regress agrees on, so the tables' versions do not
decide a verdict. Fixed seed; NEXTOK_PROPERTY_SEED / NEXTOK_PROPERTY_CASES
widen the run by hand.

Lookaheads that open an anchored pattern (`^(?=X)(?!Y)R`): random tests and
rests over a small alphabet, random strings over it, verdicts where regress
(ECMA-262) and Python `re` agree (NEXTOK_LOOKAHEAD_SEED / _CASES)."""

from __future__ import annotations

import json
import os
import random
import re
import unicodedata
from typing import Any

import regress
from schema_fuzz import UNSAT, run_maskbench

CATEGORIES = [
    "Lu",
    "Ll",
    "Lt",
    "Lm",
    "Lo",
    "Mn",
    "Mc",
    "Me",
    "Nd",
    "Nl",
    "No",
    "Pc",
    "Pd",
    "Ps",
    "Pe",
    "Pi",
    "Pf",
    "Po",
    "Sm",
    "Sc",
    "Sk",
    "So",
    "Zs",
    "Zl",
    "Zp",
    "Cc",
    "Cf",
    "Co",
]
NAMES = CATEGORIES + [
    "L",
    "LC",
    "M",
    "N",
    "P",
    "S",
    "Z",
    "C",
    "Cn",
    "Letter",
    "Uppercase_Letter",
    "Decimal_Number",
    "Punctuation",
    "Space_Separator",
    "Other_Symbol",
    "Any",
    "ASCII",
    "Assigned",
    "gc=Lu",
    "General_Category=Nd",
    "gc=Letter",
]


def prop(name: str, negated: bool = False) -> str:
    return ("\\P{" if negated else "\\p{") + name + "}"


def pools() -> dict[str, list[str]]:
    """Code points by category, where Python's table and regress agree."""
    by: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    rng = random.Random(1)
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        cat = unicodedata.category(chr(cp))
        if cat in by and (len(by[cat]) < 400 or rng.random() < 0.01):
            by[cat].append(chr(cp))
    checks = {c: regress.Regex("^" + prop("gc=" + c) + "$", "u") for c in CATEGORIES}
    return {c: [ch for ch in chars if checks[c].find(ch)] for c, chars in by.items()}


def klass(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    one = prop(name, negated=rng.random() < 0.25)
    r = rng.random()
    if r < 0.4:
        return one
    extra = rng.sample(["_", "\\-", ".", ":", "/", "=", "+", "@", "0-9", "a-f", " ", "\\s"], 2)
    second = prop(rng.choice(NAMES))
    neg = "^" if r > 0.85 else ""
    return "[" + neg + one + second + "".join(extra) + "]"


def pattern(rng: random.Random) -> str:
    body = "".join(
        klass(rng) + rng.choice(["", "+", "*", "{1,3}"]) for _ in range(rng.randint(1, 2))
    )
    return rng.choice(["^" + body + "$", body, "^" + body])


def text(rng: random.Random, chars: dict[str, list[str]]) -> str:
    return "".join(rng.choice(chars[rng.choice(CATEGORIES)]) for _ in range(rng.randint(1, 4)))


def verdicts_against(
    docs: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> tuple[list, int, int]:
    """The schemas the engine got wrong, and the valid and invalid counts.
    Only "unsatisfiable" may refuse to compile ([^\\p{Any}] is empty), and
    only where no drawn string matches."""
    bad = [
        (doc["schema"], row.get("error") or row.get("failures"))
        for doc, row in zip(docs, rows)
        if (
            not row["compiled"]
            and (UNSAT not in row["error"] or any(t["valid"] for t in doc["tests"]))
        )
        or row.get("valid_rejected")
        or row.get("invalid_accepted")
    ]
    valid = sum(t["valid"] for d in docs for t in d["tests"])
    invalid = sum(not t["valid"] for d in docs for t in d["tests"])
    return bad, valid, invalid


def test_property_classes_match_ecma_u_mode(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_PROPERTY_SEED", "11")))
    chars = pools()
    assert all(len(v) >= 1 for v in chars.values())
    docs: list[dict[str, Any]] = []
    for _ in range(int(os.environ.get("NEXTOK_PROPERTY_CASES", "120"))):
        p = pattern(rng)
        rx = regress.Regex(p, "u")
        strings = {text(rng, chars) for _ in range(14)}
        if rng.random() < 0.3:  # as a key pattern, the values anything
            schema: dict[str, Any] = {
                "type": "object",
                "patternProperties": {p: {"type": "integer"}},
                "additionalProperties": False,
            }
            tests = [{"data": {s: 1}, "valid": rx.find(s) is not None} for s in sorted(strings)]
        else:
            schema = {"type": "string", "pattern": p}
            tests = [{"data": s, "valid": rx.find(s) is not None} for s in sorted(strings)]
        docs.append({"schema": schema, "tests": tests})
    rows = run_maskbench(cli, docs)
    bad, valid, invalid = verdicts_against(docs, rows)
    print(json.dumps({"schemas": len(docs), "valid": valid, "invalid": invalid, "bad": len(bad)}))
    assert valid > 100 and invalid > 100, "the generator must make both kinds"
    assert sum(r["compiled"] for r in rows) >= 0.9 * len(docs)
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)


def test_unknown_properties_are_clear_errors(cli: str) -> None:
    docs = [
        {"schema": {"type": "string", "pattern": p}, "tests": [{"data": "a", "valid": True}]}
        for p in ["\\p{Latin}", "\\p{sc=Greek}", "\\p{Nope}", "\\p{L", "\\pL"]
    ]
    rows = run_maskbench(cli, docs)
    for doc, row in zip(docs, rows):
        assert not row["compiled"], doc
        assert "pattern" in row["error"], row["error"]


LOOK_BODIES = [
    ".*[A-Z]",
    ".*\\d",
    ".{3,6}$",
    ".{0,4}$",
    "[a-c]+$",
    "ab",
    "\\s",
    ".*x.*y",
    "(?:ab|c)",
    "[^x]*$",
    "a",
    ".*(?:xy|z)",
    "[0-9]",
    "(a|b)c",
]
RESTS = [".+", "[a-zA-Z0-9]{2,6}$", "a.*", "", ".*b$", "[a-c]*", "(?:x|y)+", ".{2,}$", "\\w+$"]
ALPHABET = 'abcxyzAB01 -é"\\\n'


def lookahead_pattern(rng: random.Random) -> str:
    tests = "".join(
        ("(?!" if rng.random() < 0.4 else "(?=") + rng.choice(LOOK_BODIES) + ")"
        for _ in range(rng.randint(1, 3))
    )
    return "^" + tests + rng.choice(RESTS)


def test_leading_lookaheads_match_ecma_and_python(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_LOOKAHEAD_SEED", "5")))
    docs: list[dict[str, Any]] = []
    for _ in range(int(os.environ.get("NEXTOK_LOOKAHEAD_CASES", "150"))):
        p = lookahead_pattern(rng)
        ecma, py = regress.Regex(p), re.compile(p)
        tests = []
        for s in sorted(
            {"".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8))) for _ in range(16)}
        ):
            verdict = ecma.find(s) is not None
            if verdict == (py.search(s) is not None):
                tests.append({"data": s, "valid": verdict})
        docs.append({"schema": {"type": "string", "pattern": p}, "tests": tests})
    rows = run_maskbench(cli, docs)
    bad, valid, invalid = verdicts_against(docs, rows)
    print(
        json.dumps(
            {"lookahead_schemas": len(docs), "valid": valid, "invalid": invalid, "bad": len(bad)}
        )
    )
    assert valid > 100 and invalid > 100
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)


def test_lookaround_elsewhere_stays_a_clear_error(cli: str) -> None:
    docs = [
        {"schema": {"type": "string", "pattern": p}, "tests": [{"data": "a", "valid": True}]}
        for p in ["a(?=b)", "(?=a)a", "^(?=a)a|b", "^a(?!b)", "(?<=a)b", "^(?=a"]
    ]
    for doc, row in zip(docs, run_maskbench(cli, docs)):
        assert not row["compiled"], doc
        assert "pattern" in row["error"], row["error"]


GROUP_BODIES = ["0|[1-9]\\d*", "[a-c]+", "x?y", "\\d{1,3}", "(?:ab|c)", "[^.]*"]


def named_group_pattern(rng: random.Random) -> str:
    """Named groups (ECMA-262 2018, as semver patterns write them) between literals."""
    parts = []
    for k in range(rng.randint(1, 3)):
        body = rng.choice(GROUP_BODIES)
        parts.append(f"(?<g{k}_{rng.choice('ab$')}>{body})" + rng.choice(["", "?", "+", "\\."]))
    anchor = rng.random() < 0.7
    return ("^" if anchor else "") + "".join(parts) + ("$" if anchor else "")


def test_named_groups_match_ecma(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_GROUP_SEED", "7")))
    docs: list[dict[str, Any]] = []
    for _ in range(80):
        p = named_group_pattern(rng)
        ecma = regress.Regex(p, "u")
        strings = {
            "".join(rng.choice("0129abcxy.") for _ in range(rng.randint(0, 7))) for _ in range(16)
        }
        tests = [{"data": s, "valid": ecma.find(s) is not None} for s in sorted(strings)]
        docs.append({"schema": {"type": "string", "pattern": p}, "tests": tests})
    rows = run_maskbench(cli, docs)
    bad, valid, invalid = verdicts_against(docs, rows)
    print(json.dumps({"named_group_schemas": len(docs), "valid": valid, "invalid": invalid}))
    assert valid > 100 and invalid > 100
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)


def test_named_backreferences_and_lookbehind_stay_clear_errors(cli: str) -> None:
    docs = [
        {"schema": {"type": "string", "pattern": p}, "tests": [{"data": "a", "valid": True}]}
        for p in ["(?<x>a)\\k<x>", "(?<=a)b", "(?<!a)b", "(?<>a)", "(?<a-b>a)"]
    ]
    for doc, row in zip(docs, run_maskbench(cli, docs)):
        assert not row["compiled"], doc
        assert "pattern" in row["error"], row["error"]
