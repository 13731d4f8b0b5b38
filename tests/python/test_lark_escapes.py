"""Escapes in Lark's string and regex literals, as lark itself reads them.

Lark rewrites a literal's text before Python evaluates it (load_grammar.py):
an escape other than \\\\ and \\U \\u \\x \\n \\f \\t \\r keeps its backslash, a
backslash before a quote is dropped, and a string's \\\\ becomes one
backslash. So /[\\\\"-#]/ holds no backslash, and "\\v" is a backslash and a
v. Random literal bodies over the characters that matter, in both kinds;
each grammar that lark loads is compared with nextok on probe texts (lark's
own reading of the literal, and edits of it) walked token by token.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess

import lark
import pytest
from conftest import ROOT, missing_fixture

TOKENIZERS = pathlib.Path(
    os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers")
)
PIECES = [
    "\\\\",
    "\\",
    '"',
    "'",
    "n",
    "v",
    "a",
    "b",
    "x41",
    "u00e9",
    "d",
    "/",
    "-",
    "#",
    "[",
    "]",
    "0",
]


def body(rng: random.Random, kind: str) -> str:
    # Not \b in a regex: a word boundary, which a DFA cannot hold (an error).
    pieces = PIECES if kind == "string" else [p for p in PIECES if p != "b"]
    s = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
    if kind == "regex":
        s = s.replace("/", "\\/")  # a bare / would end it
    return s


def lark_reading(text: str) -> tuple[lark.Lark, str] | None:
    try:
        parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    except Exception:  # noqa: BLE001 - lark refuses the literal: not compared
        return None
    term = parser.terminals[0].pattern
    return parser, term.value


def accepts(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


@pytest.mark.parametrize("kind", ["string", "regex"])
def test_literal_escapes_read_as_lark_reads_them(cli, tmp_path, kind) -> None:
    tok = TOKENIZERS / "llama3.1"
    if not (tok / "tokenizer.json").exists():
        missing_fixture(f"tokenizer {tok}")
    rng = random.Random(11 if kind == "string" else 12)
    compared, bad = 0, []
    for k in range(int(os.environ.get("NEXTOK_LARK_ESCAPE_CASES", "120"))):
        b = body(rng, kind)
        grammar = f'start: "{b}"\n' if kind == "string" else f"start: /{b}/\n"
        read = lark_reading(grammar)
        if read is None:
            continue
        parser, value = read
        probes = {value, value + "a", value[:-1], "\\" + value, value.replace("\\", "")}
        if kind == "regex":
            probes |= {"\\", '"', "\\1", '"1', "A", "\u00e9", "\\d", "0", "\\\\", "/"}
        probes = sorted(p for p in probes if p and "\n" not in p)
        path = tmp_path / f"g{k}.lark"
        path.write_text(grammar, encoding="utf-8")
        walk = tmp_path / f"w{k}.jsonl"
        walk.write_text("".join(json.dumps(p) + "\n" for p in probes), encoding="utf-8")
        r = subprocess.run(
            [
                cli,
                "grammar-generate",
                "--tokenizer",
                str(tok),
                "--grammar",
                str(path),
                "--walk",
                str(walk),
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        if "error" in lines[0]:
            bad.append({"grammar": grammar, "nextok_error": lines[0]["error"]})
            continue
        compared += 1
        for x in lines[1:]:
            want = accepts(parser, probes[x["i"]])
            if x["accepted"] != want:
                bad.append({"grammar": grammar, "text": probes[x["i"]], "lark": want})
    assert compared >= 40, compared
    assert not bad, json.dumps(bad[:5], ensure_ascii=False, indent=1)
