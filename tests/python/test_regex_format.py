"""The `regex` format against ECMA-262 (regress, with and without the u flag)
and Python's re, the dialects validators use.

Random constrained walks under {"format": "regex"} must each be a pattern all
three accept; hand-picked patterns that one of them refuses must be refused;
and common real-world patterns must be accepted (the format is a documented
sound subset, docs/constraint-engine.md, so a few valid ones are not).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import tempfile
import warnings

import regress

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(
    os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers")
)
SCHEMA = {"type": "string", "format": "regex"}


def valid_everywhere(p: str) -> bool:
    try:
        regress.Regex(p)
        regress.Regex(p, "u")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # FutureWarning: Python reserves nested sets
            re.compile(p)
    except Exception:  # noqa: BLE001 - any refusal counts
        return False
    return True


def maskbench(cli: str, tests: list[dict]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        f = pathlib.Path(tmp) / "regex.json"
        f.write_text(json.dumps({"schema": SCHEMA, "tests": tests, "description": "regex"}))
        r = subprocess.run(
            [cli, "maskbench", "--json", "--tokenizer", str(TOKENIZERS / "llama3.1"), tmp],
            capture_output=True,
            text=True,
            check=False,
        )  # exit 1: a test failed
    return json.loads(r.stdout.split("\n")[0])


def test_generated_patterns_are_valid_in_every_dialect(cli: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = pathlib.Path(tmp) / "s.json"
        f.write_text(json.dumps(SCHEMA))
        r = subprocess.run(
            [
                cli,
                "json-generate",
                "--tokenizer",
                str(TOKENIZERS / "llama3.1"),
                "--schema",
                str(f),
                "--count",
                "300",
                "--max-tokens",
                "60",
                "--seed",
                "7",
                "--close-p",
                "0.15",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    patterns = [
        json.loads(json.loads(line)["text"])
        for line in r.stdout.split("\n")
        if line and json.loads(line).get("complete")
    ]
    assert len(patterns) >= 150, len(patterns)
    assert sum(len(p) >= 8 for p in patterns) >= 40  # the walks reach past trivial patterns
    bad = [p for p in patterns if not valid_everywhere(p)]
    assert not bad, bad[:10]


# Valid in one dialect at most: each must be refused.
INVALID = [
    "a(b",
    "a)",
    "[z-a]",
    "a**",
    "*a",
    "a{2,1}",
    "(?<n>a)",
    "\\-",
    "a{",
    "]",
    "}",
    "\\01",
    "[\\d-z]",
    "(?=a)*",
    "[]",
    "[^]",
    "\\p{L}",
    "\\c",
    "(?P<n>a)",
    "a*+",
    "\\Z",
    "\\1",
    "[\\B]",
    "[a--b]",
    "\\k<n>",
    "x{,3}",
    "\\u12",
    "\\xZ1",
]


def test_patterns_a_dialect_refuses_are_refused(cli: str) -> None:
    assert not any(valid_everywhere(p) for p in INVALID)  # the list itself
    line = maskbench(cli, [{"data": p, "valid": False} for p in INVALID])
    assert line["compiled"], line
    assert line.get("invalid_accepted", 0) == 0, line.get("failures")


# Patterns as schemas write them.
COMMON = [
    "^[a-z]+$",
    "^\\d{1,3}(\\.\\d{1,3}){3}$",
    "^[A-Za-z0-9_-]+$",
    "^(?:foo|bar)*$",
    "[^\\s]+",
    "^v?[0-9]+\\.[0-9]+$",
    "^https?://",
    "^[a-f0-9]{8}-[a-f0-9]{4}$",
    "^$|^\\d{1,15}$",
    "^(\\+|-)?[0-9]+(\\.[0-9]+)?$",
    "\\bword\\b",
    "^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$",
    "^#[0-9a-fA-F]{6}$",
    "^[^/]+/[^/]+$",
    "(a|b|)c",
    "^.{0,255}$",
    ".*?x",
    "",
]


def test_common_patterns_are_accepted(cli: str) -> None:
    assert all(valid_everywhere(p) for p in COMMON)
    line = maskbench(cli, [{"data": p, "valid": True} for p in COMMON])
    assert line["compiled"], line
    assert line.get("valid_rejected", 0) == 0, line.get("failures")
