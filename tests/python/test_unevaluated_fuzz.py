"""unevaluatedProperties and unevaluatedItems against Python `jsonschema`
(Draft 2020-12) on random schemas: the keywords beside properties,
patternProperties, prefixItems, allOf, $ref, oneOf on a tag, if/then/else,
dependentSchemas, nested unevaluated keywords and both keywords on one
schema, and random objects and arrays. Every compiled schema must refuse
every invalid value. Without anyOf the engine's reading is exact, so it
must also accept every valid one; with anyOf it counts the chosen branch's
names where the spec counts every valid branch's (docs/constraint-engine.md),
so there it need only be sound. Fixed seed; NEXTOK_FUZZ_SEED and
NEXTOK_FUZZ_CASES widen the run."""

from __future__ import annotations

import json
import os
import random
from typing import Any

from schema_fuzz import UNSAT, run_maskbench, with_verdicts

KEYS = ["a", "b", "c", "d", "t"]
SMALL: list[Any] = [1, "x", True, None, 2.5]


def leaf(rng: random.Random) -> Any:
    return rng.choice([{}, True, {"type": "integer"}, {"type": "string"}, {"const": 1}])


class Gen:
    def __init__(self, rng: random.Random, any_of: bool) -> None:
        self.rng, self.any_of = rng, any_of
        self.defs: dict[str, Any] = {}

    def new_def(self) -> str:
        """A name for a definition, taken before its body is drawn (which
        may draw definitions of its own)."""
        name = f"d{len(self.defs)}"
        self.defs[name] = {}
        return name

    def obj(self, depth: int = 0) -> dict[str, Any]:
        """An object schema that evaluates some names, in place or through
        its subschemas."""
        rng = self.rng
        s: dict[str, Any] = {}
        for _ in range(rng.randint(1, 2)):
            pick = rng.randrange(10 if depth < 2 else 3)
            if pick == 0:
                s.setdefault("properties", {})[rng.choice(KEYS)] = leaf(rng)
            elif pick == 1:
                s.setdefault("patternProperties", {})[rng.choice(["^c", "d$", "^t"])] = leaf(rng)
            elif pick == 2 and rng.random() < 0.3:
                s["additionalProperties"] = leaf(rng)
            elif pick == 3:
                s.setdefault("allOf", []).append(self.obj(depth + 1))
            elif pick == 4:
                name = self.new_def()
                self.defs[name] = self.obj(depth + 1)
                s["$ref"] = f"#/$defs/{name}"
            elif pick == 5:
                tags = rng.sample([1, "x", True], 2)
                s["oneOf"] = [self.tagged(tag, depth + 1) for tag in tags]
            elif pick == 6 and self.any_of:
                s["anyOf"] = [self.obj(depth + 1), self.obj(depth + 1)]
            elif pick == 7:
                s["if"] = {"properties": {"a": {"const": 1}}, "required": ["a"]}
                s["then"] = self.obj(depth + 1)
                if rng.random() < 0.7:
                    s["else"] = self.obj(depth + 1)
            elif pick == 8:
                s["dependentSchemas"] = {rng.choice(KEYS): self.obj(depth + 1)}
            elif pick == 9:
                inner = self.obj(depth + 1)
                inner["unevaluatedProperties"] = rng.choice([False, {"type": "integer"}])
                s.setdefault("allOf", []).append(inner)
        return s

    def tagged(self, tag: Any, depth: int) -> dict[str, Any]:
        """An object branch told apart from the others by "t"."""
        b = self.obj(depth)
        b.setdefault("properties", {})["t"] = {"const": tag}
        b["required"] = ["t"]
        return b

    def arr(self, depth: int = 0) -> dict[str, Any]:
        rng = self.rng
        s: dict[str, Any] = {}
        pick = rng.randrange(6 if depth < 2 else 2)
        if pick == 0:
            s["prefixItems"] = [leaf(rng) for _ in range(rng.randint(1, 2))]
        elif pick == 1:
            s["items"] = leaf(rng)
        elif pick == 2:
            s["allOf"] = [self.arr(depth + 1), self.arr(depth + 1)]
        elif pick == 3:
            name = self.new_def()
            self.defs[name] = self.arr(depth + 1)
            s["$ref"] = f"#/$defs/{name}"
        elif pick == 4 and self.any_of:
            s["anyOf"] = [self.arr(depth + 1), self.arr(depth + 1)]
        else:
            s["if"] = {"maxItems": 1}
            s["then"] = self.arr(depth + 1)
            s["else"] = self.arr(depth + 1)
        return s

    def schema(self) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.15:  # both keywords on one schema
            s = self.obj()
            for k, v in self.arr().items():
                if k == "allOf":
                    s.setdefault("allOf", []).extend(v)
                else:
                    s.setdefault(k, v)
            s["unevaluatedProperties"] = rng.choice([False, {"type": "integer"}])
            s["unevaluatedItems"] = rng.choice([False, {"type": "integer"}])
        elif rng.random() < 0.65:
            s = self.obj()
            s["unevaluatedProperties"] = rng.choice([False, {"type": "integer"}, {"const": "x"}])
        else:
            s = self.arr()
            s["unevaluatedItems"] = rng.choice([False, {"type": "integer"}])
        if self.defs:
            s["$defs"] = self.defs
        return s


def instance(rng: random.Random) -> Any:
    if rng.random() < 0.65:
        return {k: rng.choice(SMALL) for k in rng.sample(KEYS, rng.randint(0, 4))}
    if rng.random() < 0.9:
        return [rng.choice(SMALL) for _ in range(rng.randint(0, 4))]
    return rng.choice(SMALL)


def test_unevaluated_keywords_against_jsonschema(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_FUZZ_SEED", "11")))
    cases = int(os.environ.get("NEXTOK_FUZZ_CASES", "400"))
    docs, exact = [], []
    for k in range(cases):
        any_of = k % 4 == 3
        g = Gen(rng, any_of)
        docs.append(with_verdicts(g.schema(), lambda: instance(rng), 14))
        exact.append(not any_of)
    rows = run_maskbench(cli, docs)
    unsound, refused, errors = [], [], {}
    for doc, row, must_be_exact in zip(docs, rows, exact):
        if not row["compiled"]:
            why = row["error"].split(": ", 1)[-1][:60]
            errors[why] = errors.get(why, 0) + 1
            if UNSAT in row["error"] and any(t["valid"] for t in doc["tests"]):
                unsound.append((doc["schema"], row["error"]))
            continue
        if row["invalid_accepted"] or row.get("mask_mismatch"):
            unsound.append((doc["schema"], row.get("failures")))
        elif row["valid_rejected"] and must_be_exact:
            refused.append((doc["schema"], row.get("failures")))
    compiled = [d for d, r in zip(docs, rows) if r["compiled"]]
    print(json.dumps({"schemas": len(docs), "compiled": len(compiled), "errors": errors}))
    # Floors: most schemas compile, and they see both verdicts often.
    assert len(compiled) >= cases * 3 // 4, errors
    assert sum(not t["valid"] for d in compiled for t in d["tests"]) >= cases
    assert sum(t["valid"] for d in compiled for t in d["tests"]) >= cases
    assert not unsound, json.dumps(unsound[:3], ensure_ascii=False)[:3000]
    assert not refused, json.dumps(refused[:3], ensure_ascii=False)[:3000]
