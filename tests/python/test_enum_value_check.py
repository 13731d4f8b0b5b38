"""Enumerated values beside keywords the engine cannot compile with them.

A schema with enum/const admits exactly the listed values that satisfy the
rest of it, however the rest constrains (`contains`, `not` of several
keywords, object keywords beside object values, `if`, `oneOf`, ...). The
engine checks each listed value against the rest directly (ValueCheck). This
test draws such schemas from its own generator (fixed seed), takes every
verdict from Python `jsonschema` (Draft 2020-12), and requires the engine to
accept exactly the valid values, token by token, through `nextok maskbench`.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import tempfile
from typing import Any

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers"))
UNSAT = "no JSON value satisfies this schema"
KEYS = ["a", "b", "c", "x_1", "ab"]


def value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["int", "float", "str", "bool", "null"] + (["obj", "arr"] * 2 if depth < 2 else [])
    k = rng.choice(kinds)
    if k == "int":
        return rng.randint(-5, 12)
    if k == "float":
        return rng.choice([0.5, 2.0, -1.25, 3.0])
    if k == "str":
        return rng.choice(["", "a", "ab", "xyz", "é", "a b", "10"])
    if k == "bool":
        return rng.random() < 0.5
    if k == "null":
        return None
    if k == "obj":
        return {key: value(rng, depth + 1) for key in rng.sample(KEYS, rng.randint(0, 3))}
    return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def sub_schema(rng: random.Random, depth: int = 0) -> Any:
    """One constraint from a pool that mixes compiled and uncompiled forms."""
    pool = [
        lambda: {"type": rng.choice(["object", "array", "string", "integer", "number"])},
        lambda: {"minimum": rng.randint(-2, 6)},
        lambda: {"multipleOf": rng.choice([2, 3, 0.5])},
        lambda: {"minLength": rng.randint(1, 3)},
        lambda: {"pattern": rng.choice(["^a", "b$", "[0-9]", "^$"])},
        lambda: {"required": rng.sample(KEYS, rng.randint(1, 2))},
        lambda: {"properties": {rng.choice(KEYS): sub_schema(rng, depth + 1)}},
        lambda: {"patternProperties": {rng.choice(["^a", "_", "b$"]): sub_schema(rng, depth + 1)}},
        lambda: {"additionalProperties": rng.choice([False, {"type": "integer"}])},
        lambda: {"propertyNames": {"maxLength": 1}},
        lambda: {"minProperties": rng.randint(1, 2)},
        lambda: {"maxProperties": rng.randint(0, 2)},
        lambda: {"items": sub_schema(rng, depth + 1)},
        lambda: {"prefixItems": [sub_schema(rng, depth + 1)]},
        lambda: {"minItems": rng.randint(1, 3)},
        lambda: {"maxItems": rng.randint(0, 2)},
        lambda: {"uniqueItems": True},
        lambda: {"contains": sub_schema(rng, depth + 1)},
        lambda: {"contains": {"type": "integer"}, "maxContains": 1},
        lambda: {"dependentRequired": {rng.choice(KEYS): [rng.choice(KEYS)]}},
        lambda: {"not": {**sub_schema(rng, depth + 1), **sub_schema(rng, depth + 1)}},
        lambda: {"anyOf": [sub_schema(rng, depth + 1), sub_schema(rng, depth + 1)]},
        lambda: {"oneOf": [sub_schema(rng, depth + 1), sub_schema(rng, depth + 1)]},
        lambda: {"if": sub_schema(rng, depth + 1), "then": sub_schema(rng, depth + 1),
                 "else": sub_schema(rng, depth + 1)},
    ]
    if depth > 2:
        pool = pool[:6]
    return rng.choice(pool)()


def schema(rng: random.Random) -> dict[str, Any]:
    values = []
    while len(values) < rng.randint(2, 6):
        v = value(rng)
        if all(v != w or type(v) is not type(w) for w in values):
            values.append(v)
    s: dict[str, Any] = {"enum": values} if len(values) > 1 or rng.random() < 0.5 else {
        "const": values[0]}
    parts = [sub_schema(rng) for _ in range(rng.randint(1, 3))]
    # Some constraints beside the list, some in allOf, some behind not-not.
    for p in parts:
        where = rng.random()
        if where < 0.4:
            s.update(p)
        elif where < 0.7:
            s.setdefault("allOf", []).append(p)
        else:
            s.setdefault("allOf", []).append({"not": {"not": p}})
    return s


def test_listed_values_are_exactly_the_valid_ones(cli: str) -> None:
    # NEXTOK_ENUM_CASES / NEXTOK_ENUM_SEED widen the run by hand.
    rng = random.Random(int(os.environ.get("NEXTOK_ENUM_SEED", "20261203")))
    docs, expect_unsat = [], []
    for _ in range(int(os.environ.get("NEXTOK_ENUM_CASES", "300"))):
        s = schema(rng)
        listed = s["enum"] if "enum" in s else [s["const"]]
        others = [value(rng) for _ in range(3)]
        check = jsonschema.Draft202012Validator(s)
        tests = [{"data": v, "valid": check.is_valid(v)} for v in listed + others]
        docs.append({"schema": s, "tests": tests})
        expect_unsat.append(not any(t["valid"] for t in tests if t["data"] in listed))
    with tempfile.TemporaryDirectory() as tmp:
        for k, doc in enumerate(docs):
            (pathlib.Path(tmp) / f"e{k:03}.json").write_text(json.dumps(doc, ensure_ascii=False))
        args = [cli, "maskbench", "--json", "--tokenizer", str(TOKENIZERS / "llama3.1"), tmp]
        r = subprocess.run(args, capture_output=True, text=True, check=False)
    rows = [json.loads(line) for line in r.stdout.strip().split("\n")]
    per_file = {pathlib.Path(row["file"]).name: row for row in rows if "file" in row}
    assert len(per_file) == len(docs), r.stdout[-2000:] + r.stderr[-2000:]
    valid = sum(t["valid"] for d in docs for t in d["tests"])
    assert valid >= len(docs) // 2, f"the generator drew only {valid} valid values"
    bad = []
    for k, doc in enumerate(docs):
        row = per_file[f"e{k:03}.json"]
        if not row["compiled"]:
            # Only a schema no listed value satisfies may be refused, as such.
            if not (expect_unsat[k] and UNSAT in row["error"]):
                bad.append((doc["schema"], row["error"]))
        elif row["valid_rejected"] or row["invalid_accepted"]:
            bad.append((doc["schema"], row.get("failures")))
    print(json.dumps({"schemas": len(docs), "valid_values": valid,
                      "compiled": sum(r["compiled"] for r in per_file.values()), "wrong": len(bad)}))
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)[:3000]
