"""Random JSON values and schemas for the differential schema tests
(test_enum_value_check.py, test_schema_fuzz.py), and one `nextok maskbench`
run over generated MaskBench files. The generator knows nothing of the
engine; Python `jsonschema` gives every verdict."""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import tempfile
from typing import Any, Callable

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(
    os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers")
)
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


TAGS: list[Any] = ["", "a", "ab", 1, None, True]


def tagged_object(rng: random.Random, tag: Any, depth: int) -> dict[str, Any]:
    """An object branch whose "a" (when present) names it: oneOf's discriminators."""
    s: dict[str, Any] = {"type": "object", "properties": {"a": {"const": tag}}}
    if rng.random() < 0.5:
        s["properties"][rng.choice(KEYS[1:])] = sub_schema(rng, depth + 2)
    if rng.random() < 0.4:
        s["required"] = ["a"]
    if rng.random() < 0.5:
        s["additionalProperties"] = False
    return s


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
        lambda: {"contains": sub_schema(rng, depth + 1), "minContains": rng.randint(0, 3)},
        lambda: {"dependentRequired": {rng.choice(KEYS): [rng.choice(KEYS)]}},
        lambda: {"not": {**sub_schema(rng, depth + 1), **sub_schema(rng, depth + 1)}},
        lambda: {"anyOf": [sub_schema(rng, depth + 1), sub_schema(rng, depth + 1)]},
        lambda: {"oneOf": [sub_schema(rng, depth + 1), sub_schema(rng, depth + 1)]},
        lambda: {
            "oneOf": [tagged_object(rng, tag, depth) for tag in rng.sample(TAGS, rng.randint(2, 3))]
        },
        lambda: {
            rng.choice(["maximum", "exclusiveMaximum", "exclusiveMinimum"]): rng.randint(-2, 6)
        },
        lambda: {"maxLength": rng.randint(0, 2)},
        lambda: {
            "if": sub_schema(rng, depth + 1),
            "then": sub_schema(rng, depth + 1),
            "else": sub_schema(rng, depth + 1),
        },
    ]
    if depth > 2:
        pool = pool[:6]
    return rng.choice(pool)()


def run_maskbench(cli: str, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-file rows of one maskbench run over docs, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        for k, doc in enumerate(docs):
            (pathlib.Path(tmp) / f"d{k:05}.json").write_text(json.dumps(doc, ensure_ascii=False))
        args = [cli, "maskbench", "--json", "--tokenizer", str(TOKENIZERS / "llama3.1"), tmp]
        r = subprocess.run(args, capture_output=True, text=True, check=False)
    rows = [json.loads(line) for line in r.stdout.strip().split("\n") if line]
    per_file = {pathlib.Path(row["file"]).name: row for row in rows if "file" in row}
    assert len(per_file) == len(docs), r.stdout[-2000:] + r.stderr[-2000:]
    return [per_file[f"d{k:05}.json"] for k in range(len(docs))]


def with_verdicts(schema: Any, draw: Callable[[], Any], count: int) -> dict[str, Any]:
    """A MaskBench document: up to `count` distinct drawn values, each with
    jsonschema's verdict (Draft 2020-12)."""
    check = jsonschema.Draft202012Validator(schema)
    seen: list[Any] = []
    for _ in range(count):
        v = draw()
        if not any(v == w and type(v) is type(w) for w in seen):
            seen.append(v)
    return {"schema": schema, "tests": [{"data": v, "valid": check.is_valid(v)} for v in seen]}


def differential_run(cli: str, docs: list[dict[str, Any]]) -> tuple[list[Any], dict[str, Any]]:
    """One maskbench run over docs: the wrong verdicts (a compiled schema that
    refuses a valid value or takes an invalid one, or one called
    unsatisfiable that has a valid value) and a summary."""
    rows = run_maskbench(cli, docs)
    bad: list[Any] = []
    errors: dict[str, int] = {}
    for doc, row in zip(docs, rows):
        if not row["compiled"]:
            why = row["error"].split(": ", 1)[-1][:60]  # without the pointer
            errors[why] = errors.get(why, 0) + 1
            if UNSAT in row["error"] and any(t["valid"] for t in doc["tests"]):
                bad.append((doc["schema"], row["error"]))
        elif row["valid_rejected"] or row["invalid_accepted"] or row.get("mask_mismatch"):
            bad.append((doc["schema"], row.get("failures")))
    compiled = [d for d, r in zip(docs, rows) if r["compiled"]]
    summary = {
        "schemas": len(docs),
        "compiled": len(compiled),
        "valid": sum(t["valid"] for d in compiled for t in d["tests"]),
        "invalid": sum(not t["valid"] for d in compiled for t in d["tests"]),
        "wrong": len(bad),
        "errors": errors,
    }
    print(json.dumps(summary))
    return bad, summary


def json_generate(
    cli: str,
    schemas: list[Any],
    tmp: pathlib.Path,
    *,
    count: int,
    seed: int,
    max_tokens: int,
    close_p: float | None = None,
) -> list[dict[str, Any]]:
    """`nextok json-generate` over schemas (random logits, Llama-3.1): one
    row per walk, {"schema": index, "complete", "text", "dead_end"?}."""
    path = tmp / "schemas.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in schemas))
    args = [
        cli,
        "json-generate",
        "--tokenizer",
        str(TOKENIZERS / "llama3.1"),
        "--schemas-jsonl",
        str(path),
        "--count",
        str(count),
        "--seed",
        str(seed),
        "--max-tokens",
        str(max_tokens),
    ]
    if close_p is not None:
        args += ["--close-p", str(close_p)]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.split("\n") if line]
