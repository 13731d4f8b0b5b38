"""oneOf whose branches overlap, enforced as each branch beside the other
branches' negations (anyOf_i (B_i and not B_j, j != i)), and `not` of $refs,
properties and bounds: random documents in those forms against Python
`jsonschema`. Branches are open objects told apart by which properties they
declare and require, closed objects (`additionalProperties: false`: their
negation holds some key outside their names), scalar ranges that nest
({maximum: 2} / {maximum: 5}), $refs to shared definitions, recursive
definitions (trees, negated through themselves), if/then/else (the test
any branch shape, its negation beside else), dependent
keywords, contains, nested oneOf and unknown keywords: the shapes real
schemas write. Every compiled document must accept exactly the valid
values, token by token."""

from __future__ import annotations

import decimal
import json
import os
import random
from typing import Any

import jsonschema
from schema_fuzz import differential_run, json_generate, value, with_verdicts

KEYS = ["a", "b", "c", "x_1", "ab"]


def leaf(rng: random.Random) -> dict[str, Any]:
    pool = [
        lambda: {"type": rng.choice(["string", "integer", "number", "boolean", "null", "object"])},
        lambda: {"type": "string", "maxLength": rng.randint(0, 3)},
        lambda: {"type": "integer", rng.choice(["minimum", "maximum"]): rng.randint(-2, 8)},
        lambda: {"enum": rng.sample(["a", "ab", 1, 2, None, True], rng.randint(1, 3))},
        lambda: {"const": rng.choice(["", "a", 3, False])},
        lambda: {rng.choice(["maximum", "exclusiveMinimum"]): rng.randint(-2, 8)},
        lambda: {"minLength": rng.randint(0, 2)},
        # Divisors exact in binary, so that jsonschema's float division is exact too.
        lambda: {"multipleOf": rng.choice([2, 3, 0.5, 2.5, 0.25])},
    ]
    return rng.choice(pool)()


def shaped(rng: random.Random, defs: dict[str, Any]) -> dict[str, Any]:
    """Keyword forms whose negation builds on others: if/then/else,
    dependencies, contains, a nested oneOf, unknown keywords."""
    pool = [
        lambda: {"if": leaf(rng), "then": leaf(rng), "else": leaf(rng)},
        lambda: {"if": {"required": [rng.choice(KEYS)]}, "then": {"required": [rng.choice(KEYS)]}},
        lambda: {"dependentRequired": {rng.choice(KEYS): [rng.choice(KEYS)]}},
        lambda: {"dependentSchemas": {rng.choice(KEYS): leaf(rng)}},
        lambda: {"type": "array", "contains": leaf(rng)},
        lambda: {"oneOf": [leaf(rng), leaf(rng)]},
        lambda: {"x-vendor": rng.choice([1, "a"]), **leaf(rng)},
    ]
    s = rng.choice(pool)()
    if defs and rng.random() < 0.3:
        s["properties"] = {rng.choice(KEYS): {"$ref": "#/$defs/" + rng.choice(sorted(defs))}}
    return s


def branch(rng: random.Random, defs: dict[str, Any]) -> dict[str, Any]:
    kind = rng.random()
    if kind < 0.15:
        return leaf(rng)
    if kind < 0.3 and defs:
        return {"$ref": "#/$defs/" + rng.choice(sorted(defs))}
    if kind < 0.42:
        return shaped(rng, defs)
    props = {k: leaf(rng) for k in rng.sample(KEYS, rng.randint(1, 3))}
    s: dict[str, Any] = {"properties": props}
    if rng.random() < 0.7:
        s["type"] = "object"
    if rng.random() < 0.6:
        s["required"] = rng.sample(sorted(props), rng.randint(1, len(props)))
    if rng.random() < 0.2:
        s[rng.choice(["minProperties", "maxProperties"])] = rng.randint(1, 3)
    if rng.random() < 0.2:  # a list property whose items are constrained
        s["properties"][rng.choice(KEYS)] = {"type": "array", "items": leaf(rng)}
    if rng.random() < 0.4:  # closed: its negation needs some key outside its names
        s["additionalProperties"] = rng.choice([False, False, {"not": {}}, True])
        if rng.random() < 0.4:  # and outside its patterns (`x_1`, `ab` match some)
            s["patternProperties"] = {rng.choice(["^x", "b$", "^a", "_"]): {}}
    elif rng.random() < 0.3:  # a pattern with a schema: its negation claims a key's value
        s["patternProperties"] = {rng.choice(["^x", "b$", "^a", "_"]): leaf(rng)}
    return s


def recursive(rng: random.Random) -> dict[str, Any]:
    """A definition that holds itself (a tree), the shape whose negation
    must refer to itself."""
    node: dict[str, Any] = {
        "type": "object",
        "properties": {"v": leaf(rng), "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
    }
    if rng.random() < 0.5:
        node["additionalProperties"] = False
    if rng.random() < 0.5:
        node["required"] = ["v"]
    return node


def document(rng: random.Random) -> dict[str, Any]:
    defs = {f"d{i}": branch(rng, {}) for i in range(rng.randint(0, 2))}
    if rng.random() < 0.3:
        defs["t"] = recursive(rng)
    if rng.random() < 0.2:  # a general if: the test read as written, else beside its negation
        s: dict[str, Any] = {"if": branch(rng, defs), "then": branch(rng, defs)}
        if rng.random() < 0.7:
            s["else"] = branch(rng, defs)
    elif rng.random() < 0.25 and defs:
        s = {
            "type": "object",
            "not": {"$ref": "#/$defs/" + rng.choice(sorted(defs))},
        }
    else:
        s = {"oneOf": [branch(rng, defs) for _ in range(rng.randint(2, 3))]}
    if defs:
        s["$defs"] = defs
    return s


def tree(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if rng.random() < 0.8:
        t["v"] = rng.choice([rng.randint(-3, 9), "a", None, True])
    if depth < 2 and rng.random() < 0.6:
        t["kids"] = [tree(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.15:
        t[rng.choice(KEYS)] = 1
    return t


def object_value(rng: random.Random) -> dict[str, Any]:
    picks = [value(rng, 2), rng.randint(-3, 9), "a", "ab", None, 1.5, [rng.randint(0, 3), "a"]]
    if rng.random() < 0.25:
        picks.append(tree(rng))
    out = {k: rng.choice(picks) for k in rng.sample(KEYS, rng.randint(0, 4))}
    return tree(rng) if rng.random() < 0.15 else out


def test_negated_one_of_branches_accept_exactly_the_valid_values(cli: str) -> None:
    rng = random.Random(int(os.environ.get("NEXTOK_FUZZ_SEED", "5")))
    cases = int(os.environ.get("NEXTOK_FUZZ_CASES", "600"))

    def draw() -> Any:
        return object_value(rng) if rng.random() < 0.6 else value(rng)

    docs = [with_verdicts(document(rng), draw, 14) for _ in range(cases)]
    bad, n = differential_run(cli, docs)
    # About 90% compile (the rest are unsatisfiable, or hold a form whose
    # negation is not built); the floors keep the test from passing vacuously.
    assert n["compiled"] >= len(docs) * 8 // 10 and n["valid"] >= len(docs)
    assert n["invalid"] >= len(docs)
    assert not bad, json.dumps(bad[:5], ensure_ascii=False)[:3000]


def float_exact(text: str) -> Any:
    """The JSON value of text, or None when a number in it is not exactly a
    double (Python would round it, and jsonschema judge the rounded value:
    random walks write 200-digit numbers)."""
    exact = True

    def number(s: str) -> Any:
        nonlocal exact
        v = float(s)
        exact &= decimal.Decimal(s) == decimal.Decimal(v)
        return v

    def integer(s: str) -> int:
        nonlocal exact
        exact &= abs(int(s)) < 2**53
        return int(s)

    value = json.loads(text, parse_float=number, parse_int=integer)
    return value if exact else None


def test_walks_under_negations_end_valid_and_never_stall(cli: str, tmp_path: Any) -> None:
    """Random constrained walks (`nextok json-generate`, random logits) under
    generated documents: no walk reaches a state with no token and no EOS
    (a dead end), and every finished output validates with jsonschema."""
    rng = random.Random(int(os.environ.get("NEXTOK_WALK_SEED", "9")))
    docs = [document(rng) for _ in range(int(os.environ.get("NEXTOK_WALK_DOCS", "1000")))]
    lines = json_generate(cli, docs, tmp_path, count=4, seed=5, max_tokens=96)
    bad, complete, inexact = [], 0, 0
    for line in lines:
        if "error" in line:
            continue
        schema = docs[line["schema"]]
        if line.get("dead_end"):
            bad.append((schema, line["text"][:200], "dead end"))
        if not line["complete"]:
            continue
        value = float_exact(line["text"])
        if value is None:  # jsonschema would judge a rounded number
            inexact += 1
            continue
        complete += 1
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
        if errors:
            bad.append((schema, line["text"][:200], errors[0].message[:200]))
    print(
        json.dumps({"walks": len(lines), "complete": complete, "inexact": inexact, "bad": len(bad)})
    )
    assert complete >= len(docs), "too few walks finished to mean anything"
    assert not bad, json.dumps(bad[:3], ensure_ascii=False)[:3000]
