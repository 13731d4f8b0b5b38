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
import random
from typing import Any

import jsonschema
from schema_fuzz import UNSAT, run_maskbench, sub_schema, value


def schema(rng: random.Random) -> dict[str, Any]:
    values = []
    while len(values) < rng.randint(2, 6):
        v = value(rng)
        if all(v != w or type(v) is not type(w) for w in values):
            values.append(v)
    s: dict[str, Any] = (
        {"enum": values} if len(values) > 1 or rng.random() < 0.5 else {"const": values[0]}
    )
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
    rows = run_maskbench(cli, docs)
    valid = sum(t["valid"] for d in docs for t in d["tests"])
    assert valid >= len(docs) // 2, f"the generator drew only {valid} valid values"
    bad = []
    for k, doc in enumerate(docs):
        row = rows[k]
        if not row["compiled"]:
            # Only a schema no listed value satisfies may be refused, as such.
            if not (expect_unsat[k] and UNSAT in row["error"]):
                bad.append((doc["schema"], row["error"]))
        elif row["valid_rejected"] or row["invalid_accepted"] or row.get("mask_mismatch"):
            bad.append((doc["schema"], row.get("failures")))
    print(
        json.dumps(
            {
                "schemas": len(docs),
                "valid_values": valid,
                "compiled": sum(r["compiled"] for r in rows),
                "wrong": len(bad),
            }
        )
    )
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)[:3000]
