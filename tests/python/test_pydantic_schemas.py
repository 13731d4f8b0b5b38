"""The JSON Schema engine on the schemas most users send: pydantic's. Random
pydantic models (nested models, Optional, unions plain and discriminated,
Literal, Enum, list/dict/tuple/set fields, constrained strings and numbers,
formats, defaults, recursion, forbidden extras) give their
`model_json_schema()`; for each:

  - nextok compiles it;
  - values drawn for the model and dumped by pydantic are accepted token by
    token, and mutated values exactly when jsonschema accepts them
    (`nextok maskbench`, which also checks every mask bit along the way);
  - random constrained walks (`json-generate`) end in outputs that pydantic's
    own `model_validate_json` accepts, and never dead-end.

Fixed seed; NEXTOK_PYDANTIC_SEED and NEXTOK_PYDANTIC_MODELS widen the run."""

from __future__ import annotations

import datetime
import enum
import json
import os
import random
import uuid
from typing import Annotated, Any, Literal, Optional, Union

import jsonschema
import pydantic
import pytest
from pydantic import BaseModel, ConfigDict, Field, create_model
from schema_fuzz import json_generate, run_maskbench

SEED = int(os.environ.get("NEXTOK_PYDANTIC_SEED", "1"))
MODELS = int(os.environ.get("NEXTOK_PYDANTIC_MODELS", "120"))
WORDS = [
    "a",
    "b",
    "x_y",
    "hello",
    "Zürich",
    "日本",
    "",
    "with space",
    'q"uote',
    "back\\slash",
    "line\nbreak",
]


class Color(str, enum.Enum):
    red = "red"
    green = "green"
    dark_blue = "dark blue"


class Level(int, enum.Enum):
    low = 1
    high = 10


class Draw:
    """A field type and a function drawing Python values for it (possibly
    invalid ones, which pydantic then refuses and the draw is dropped)."""

    def __init__(
        self, rng: random.Random, depth: int = 0, models: list[type[BaseModel]] | None = None
    ) -> None:
        self.rng, self.depth = rng, depth
        self.models = models if models is not None else []

    def leaf(self) -> tuple[Any, Any]:
        r = self.rng
        k = r.randrange(16)
        if k == 0:
            return str, lambda: r.choice(WORDS)
        if k == 1:
            lo, hi = r.randint(0, 3), r.randint(3, 8)
            return Annotated[
                str, Field(min_length=lo, max_length=hi)
            ], lambda: "x" * r.randint(lo, hi)
        if k == 2:
            pat = r.choice([r"^[a-z]+$", r"^\d{3}-\d{4}$", r"^[A-Z][a-z]*( [A-Z][a-z]*)?$"])
            samples = {
                r"^[a-z]+$": ["abc", "z"],
                r"^\d{3}-\d{4}$": ["555-1234"],
                r"^[A-Z][a-z]*( [A-Z][a-z]*)?$": ["Ada", "Ada Lovelace"],
            }[pat]
            return Annotated[str, Field(pattern=pat)], lambda: r.choice(samples)
        if k == 3:
            return int, lambda: r.choice([0, -1, 7, 10**12, -(10**15)])
        if k == 4:
            lo = r.randint(-5, 5)
            hi = lo + r.randint(0, 20)
            return Annotated[int, Field(ge=lo, le=hi)], lambda: r.randint(lo, hi)
        if k == 5:
            m = r.choice([2, 3, 5])
            return Annotated[
                int, Field(multiple_of=m, gt=-100, lt=100)
            ], lambda: m * r.randint(-9, 9)
        if k == 6:
            return float, lambda: r.choice([0.0, 1.5, -2.25, 3.0, 1e10])
        if k == 7:
            return Annotated[float, Field(ge=0.0, le=1.0)], lambda: r.choice([0.0, 0.5, 1.0, 0.125])
        if k == 8:
            return bool, lambda: r.random() < 0.5
        if k == 9:
            lit = r.sample(["on", "off", "auto", 1, 2, True], r.randint(1, 3))
            return Literal[tuple(lit)], lambda: r.choice(lit)
        if k == 10:
            return Color, lambda: r.choice(list(Color))
        if k == 11:
            return Level, lambda: r.choice(list(Level))
        if k == 12:
            return datetime.date, lambda: datetime.date(2024, r.randint(1, 12), r.randint(1, 28))
        if k == 13:
            return datetime.datetime, lambda: datetime.datetime(
                2025, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc
            )
        if k == 14:
            return uuid.UUID, lambda: uuid.UUID(int=r.getrandbits(128))
        return None.__class__, lambda: None

    def field(self) -> tuple[Any, Any]:
        r = self.rng
        if self.depth >= 2:
            return self.leaf()
        k = r.randrange(10)
        inner = Draw(r, self.depth + 1, self.models)
        if k == 0:
            t, d = inner.field()
            return Optional[t], lambda: None if r.random() < 0.3 else d()
        if k == 1:
            t, d = inner.field()
            lo = r.randint(0, 2)
            return Annotated[list[t], Field(min_length=lo, max_length=lo + 3)], lambda: [
                d() for _ in range(r.randint(lo, lo + 3))
            ]
        if k == 2:
            t, d = inner.field()
            return dict[str, t], lambda: {r.choice(WORDS): d() for _ in range(r.randint(0, 3))}
        if k == 3:
            (t1, d1), (t2, d2) = inner.leaf(), inner.leaf()
            return tuple[t1, t2], lambda: (d1(), d2())
        if k == 4:
            (t1, d1), (t2, d2) = inner.leaf(), inner.leaf()
            return Union[t1, t2], lambda: d1() if r.random() < 0.5 else d2()
        if k == 5:
            return inner.model()
        if k == 6:
            return inner.tagged_union()
        if k == 7:
            # A set is uniqueItems: true, exact here over finite item sets.
            items = r.choice([Color, Level, Literal["a", "b", "c", 1, 2]])
            pool = list(items) if isinstance(items, type) else ["a", "b", "c", 1, 2]
            return set[items], lambda: set(r.sample(pool, r.randint(0, len(pool))))
        return self.leaf()

    def model(self) -> tuple[Any, Any]:
        r = self.rng
        fields, draws = {}, {}
        for i in range(r.randint(1, 5)):
            t, d = self.field()
            name = r.choice(["id", "name", "value", "items", "meta", "kind", "x"]) + str(i)
            if r.random() < 0.25:
                default = d()
                fields[name] = (t, default)
                draws[name] = (d, True)
            else:
                fields[name] = (t, ...)
                draws[name] = (d, False)
        config = ConfigDict(extra="forbid") if r.random() < 0.4 else ConfigDict()
        m = create_model(f"M{len(self.models)}", __config__=config, **fields)
        self.models.append(m)

        def draw() -> dict[str, Any]:
            return {
                k: d() for k, (d, optional) in draws.items() if not optional or r.random() < 0.6
            }

        return m, draw

    def tagged_union(self) -> tuple[Any, Any]:
        r = self.rng
        parts, draws = [], []
        for tag in r.sample(["cat", "dog", "fish"], r.randint(2, 3)):
            (t, d) = Draw(r, 2, self.models).leaf()
            m = create_model(f"T{len(self.models)}_{tag}", kind=(Literal[tag], ...), body=(t, ...))
            self.models.append(m)
            parts.append(m)
            draws.append(lambda tag=tag, d=d: {"kind": tag, "body": d()})
        return Annotated[Union[tuple(parts)], Field(discriminator="kind")], lambda: r.choice(
            draws
        )()


def recursive_model(rng: random.Random) -> tuple[type[BaseModel], Any]:
    class Node(BaseModel):
        label: str
        children: list[Node] = []

    def draw(depth: int = 0) -> dict[str, Any]:
        n = rng.randint(0, 2) if depth < 3 else 0
        return {"label": rng.choice(WORDS), "children": [draw(depth + 1) for _ in range(n)]}

    return Node, draw


def mutate(rng: random.Random, v: Any) -> Any:
    if isinstance(v, dict) and v:
        k = rng.choice(list(v))
        w = dict(v)
        if rng.random() < 0.3:
            del w[k]
        else:
            w[k] = mutate(rng, v[k])
        return w
    if isinstance(v, list) and v:
        w = list(v)
        i = rng.randrange(len(w))
        w[i] = mutate(rng, w[i])
        return w
    return rng.choice([None, 0, -3, 2.5, "zz", True, [], {}, "x" * 12])


def documents(rng: random.Random, n: int) -> list[tuple[type[BaseModel], dict[str, Any]]]:
    out = []
    while len(out) < n:
        model, draw = recursive_model(rng) if rng.random() < 0.08 else Draw(rng).model()
        schema = model.model_json_schema()
        check = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        tests, seen = [], set()
        for _ in range(8):
            try:
                value = json.loads(model.model_validate(draw()).model_dump_json())
            except pydantic.ValidationError:
                continue
            for v, want in ((value, True), (mutate(rng, value), None)):
                key = json.dumps(v, sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
                valid = check.is_valid(v)
                assert want is None or valid, (schema, v)  # pydantic's dump is valid
                tests.append({"data": v, "valid": valid})
        if any(t["valid"] for t in tests):
            out.append((model, {"schema": schema, "tests": tests}))
    return out


@pytest.fixture(scope="module")
def docs() -> list[tuple[type[BaseModel], dict[str, Any]]]:
    return documents(random.Random(SEED), MODELS)


def test_pydantic_schemas_compile_and_judge_values_exactly(cli: str, docs: Any) -> None:
    rows = run_maskbench(cli, [d for _, d in docs])
    errors = [(d["schema"], r["error"]) for (_, d), r in zip(docs, rows) if not r["compiled"]]
    wrong = [
        (d["schema"], r.get("failures"))
        for (_, d), r in zip(docs, rows)
        if r["compiled"]
        and (r["valid_rejected"] or r["invalid_accepted"] or r.get("mask_mismatch"))
    ]
    valid = sum(t["valid"] for _, d in docs for t in d["tests"])
    print(
        json.dumps(
            {"models": len(docs), "values": valid, "errors": len(errors), "wrong": len(wrong)}
        )
    )
    assert not errors, json.dumps(errors[:3], ensure_ascii=False)[:3000]
    assert not wrong, json.dumps(wrong[:3], ensure_ascii=False)[:3000]


def test_walks_end_in_values_pydantic_accepts(cli: str, docs: Any, tmp_path: Any) -> None:
    lines = json_generate(
        cli, [d["schema"] for _, d in docs], tmp_path, count=4, seed=3, max_tokens=300, close_p=0.5
    )
    bad, complete = [], 0
    for line in lines:
        assert "error" not in line, line
        model, doc = docs[line["schema"]]
        if line.get("dead_end"):
            bad.append((doc["schema"], line["text"][:300], "dead end"))
        if not line["complete"]:
            continue
        complete += 1
        try:
            model.model_validate_json(line["text"])
        except pydantic.ValidationError as e:
            bad.append((doc["schema"], line["text"][:300], str(e)[:300]))
    print(json.dumps({"walks": len(lines), "complete": complete, "bad": len(bad)}))
    assert not bad, json.dumps(bad[:3], ensure_ascii=False, default=str)[:3000]
    assert complete >= len(docs) // 2, "too few walks finished to mean anything"
