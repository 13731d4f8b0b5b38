"""A generative oracle for the JSON-Schema constraint engine.

For every schema of a corpus, an independent generator (hypothesis-jsonschema,
fixed seeds) draws instances; Python `jsonschema` (the schema's own draft,
with the format checker) keeps the valid ones. Each is written out in varied
spellings (compact, spaced, shuffled key order, random whitespace runs) and
must be accepted token by token, EOS at the end; mutations that `jsonschema`
calls invalid must be refused. A compile-time "no JSON value satisfies this
schema" verdict on a schema the generator found an instance for is a bug.

The walk itself is `nextok maskbench` over generated MaskBench files whose
tests carry the exact `text` to tokenize.

    python tests/python/schema_oracle.py --cli build/release/tools/nextok \\
        --tokenizer build/release/tokenizers/llama3.1 --corpus all --out /tmp/oracle

prints one JSON summary line per corpus and vocabulary and writes every
failure to OUT/failures.jsonl.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import pathlib
import pickle
import random
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pattern_engines import use_regex_fallback
from schema_sampler import sample_instances

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("NEXTOK_SHARED", ROOT.parent / "shared"))
UNSAT = "no JSON value satisfies this schema"
MAX_WHITESPACE = 20  # the engine's default whitespace run


@dataclass
class Case:
    name: str
    schema: Any
    valid: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    generated: bool = False  # the generator found at least one valid instance
    skipped: str = ""  # why no instance was generated


# --- corpora -----------------------------------------------------------------


def corpus_maskbench() -> Iterator[tuple[str, Any]]:
    for f in sorted((SHARED / "datasets" / "maskbench").glob("*.json")):
        yield f"maskbench/{f.name}", json.loads(f.read_text())["schema"]


def corpus_test_suite() -> Iterator[tuple[str, Any]]:
    suite = SHARED / "datasets" / "json-schema-test-suite" / "tests" / "draft2020-12"
    for f in sorted(suite.rglob("*.json")):
        for i, group in enumerate(json.loads(f.read_text())):
            yield f"test-suite/{f.relative_to(suite)}#{i}", group["schema"]


def corpus_schemastore() -> Iterator[tuple[str, Any]]:
    """SchemaStore schemas vendored by the check-jsonschema package."""
    import check_jsonschema

    vendor = pathlib.Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor"
    for f in sorted(vendor.glob("*.json")):
        yield f"schemastore/{f.name}", json.loads(f.read_text())


class _DataOnly(pickle.Unpickler):
    """Unpickles plain containers only: no class is ever looked up."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing {module}.{name}")


def corpus_schemastore_full() -> Iterator[tuple[str, Any]]:
    """The SchemaStore catalog's schemas as the `schemastore` package ships
    them: a requests-cache SQLite file of pickled responses (plain dicts),
    read without importing the package."""
    import sqlite3

    db = sqlite3.connect(f"file:{package_dir('schemastore') / 'cache.sqlite'}?mode=ro", uri=True)
    found = []
    for (blob,) in db.execute("SELECT value FROM responses"):
        try:
            response = _DataOnly(io.BytesIO(blob)).load()
            doc = json.loads(response["_content"])
        except (pickle.UnpicklingError, KeyError, TypeError, ValueError):
            continue  # not a stored JSON response
        url = str(response.get("url", ""))
        if isinstance(doc, dict) and not url.endswith("/catalog.json") and (
                "$schema" in doc or "properties" in doc or "definitions" in doc or "$defs" in doc):
            found.append((f"schemastore-full/{url.split('://', 1)[-1]}", doc))
    db.close()
    yield from sorted(found, key=lambda x: x[0])


def corpus_metaschemas() -> Iterator[tuple[str, Any]]:
    """The JSON Schema metaschemas of jsonschema-specifications."""
    import jsonschema_specifications

    base = pathlib.Path(jsonschema_specifications.__file__).parent / "schemas"
    for f in sorted(base.rglob("*.json")):
        yield f"metaschema/{f.relative_to(base)}", json.loads(f.read_text())


def package_dir(name: str) -> pathlib.Path:
    """Where a package's files are, without importing it (data-only installs)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name} is not installed (pip install --no-deps {name})")
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def _refs(v: Any) -> Iterator[str]:
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "$ref" and isinstance(x, str):
                yield x
            else:
                yield from _refs(x)
    elif isinstance(v, list):
        for x in v:
            yield from _refs(x)


def _rewrite_refs(v: Any, old: str, new: str) -> Any:
    if isinstance(v, dict):
        return {k: (x.replace(old, new, 1) if k == "$ref" and isinstance(x, str) else _rewrite_refs(x, old, new))
                for k, x in v.items()}
    if isinstance(v, list):
        return [_rewrite_refs(x, old, new) for x in v]
    return v


def corpus_kubernetes() -> Iterator[tuple[str, Any]]:
    """Kubernetes resource schemas (kubernetes-validate, newest version, both
    the plain and the strict variant): references to the shared definitions
    made local, with only the definitions each resource reaches."""
    base = package_dir("kubernetes_validate") / "kubernetes-json-schema"
    newest = sorted({d.name.split("-")[0] for d in base.iterdir() if d.is_dir()},
                    key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))[-1]
    for variant in (f"{newest}-local", f"{newest}-local-strict"):
        folder = base / variant
        defs = json.loads((folder / "_definitions.json").read_text())["$defs"]
        for f in sorted(folder.glob("*.json")):
            if f.name.startswith("_") or f.name == "all.json":
                continue
            doc = _rewrite_refs(json.loads(f.read_text()), "/api/_definitions.json#", "#")
            keep: dict[str, Any] = {}
            todo = list(_refs(doc))
            while todo:
                r = todo.pop()
                key = r.rsplit("/", 1)[-1]
                if r.startswith("#/$defs/") and key in defs and key not in keep:
                    keep[key] = _rewrite_refs(defs[key], "/api/_definitions.json#", "#")
                    todo.extend(_refs(keep[key]))
            if keep:
                doc["$defs"] = keep
            yield f"kubernetes/{variant}/{f.name}", doc


def corpus_cloudformation() -> Iterator[tuple[str, Any]]:
    """AWS CloudFormation resource provider schemas shipped by cfn-lint."""
    for f in sorted((package_dir("cfnlint") / "data" / "schemas" / "resources").glob("*.json")):
        yield f"cloudformation/{f.name}", json.loads(f.read_text())


def corpus_pyproject() -> Iterator[tuple[str, Any]]:
    """pyproject.toml tool schemas (validate-pyproject-schema-store) and the
    notebook format schemas (nbformat)."""
    for f in sorted((package_dir("validate_pyproject_schema_store") / "resources").glob("*.json")):
        yield f"pyproject/{f.name}", json.loads(f.read_text())
    for f in sorted(package_dir("nbformat").rglob("*.schema.json")):
        yield f"nbformat/{f.name}", json.loads(f.read_text())


def corpus_synthetic_keys(count: int = 300, seed: int = 17) -> Iterator[tuple[str, Any]]:
    """Generated object schemas that stress key automata: declared names that
    extend each other, pattern properties that overlap them (anchored
    anywhere, starting with '/'), nullable unions of values, required
    subsets, dependencies, propertyNames, additionalProperties of every
    kind, and oneOf branches told apart by required keys."""
    rng = random.Random(seed)
    stems = ["a", "ab", "a_b", "abc", "bad_if", "bad_if_regexp", "/", "/x", "x-", "x-y", "id", "ids", "é", "k1", "k10"]
    values = [{"type": "integer"}, {"type": "string"}, {"type": ["string", "null"]},
              {"oneOf": [{"type": "null"}, {"type": "string"}]}, {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+[a-z]*$"}]},
              {"enum": ["on", "off", None]}, {"type": "number", "minimum": 0, "maximum": 10},
              {"type": "array", "items": {"type": "string"}, "maxItems": 2}, {"$ref": "#/$defs/q"}]
    patterns = ["^/", "^x-", "_regexp$", "^a", "b", "^$|^k[0-9]+$", "(^id$)|(^ids$)"]
    for i in range(count):
        names = rng.sample(stems, rng.randint(1, 6))
        schema: dict[str, Any] = {"type": "object", "properties": {n: rng.choice(values) for n in names},
                                  "$defs": {"q": {"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]}}}
        if rng.random() < 0.5:
            schema["required"] = rng.sample(names, rng.randint(0, len(names)))
        if rng.random() < 0.5:
            schema["patternProperties"] = {pt: rng.choice(values) for pt in rng.sample(patterns, rng.randint(1, 2))}
        schema["additionalProperties"] = rng.choice([False, True, rng.choice(values)])
        if rng.random() < 0.2 and len(names) > 1:
            schema["dependentRequired"] = {names[0]: [names[1]]}
        if rng.random() < 0.3:
            schema["propertyNames"] = rng.choice([{"pattern": "^[a-z_/]+$"}, {"maxLength": 3}, {"minLength": 2},
                                                  {"enum": rng.sample(stems, 4)}, {"pattern": "^x-|^a"},
                                                  {"format": "json-pointer"}])
        # oneOf told apart by required keys ("exactly one of"), with its own
        # generator so that the schemas above stay as they were.
        extra = random.Random(seed * 7919 + i)
        if extra.random() < 0.3:
            branches = []
            for _ in range(extra.randint(2, 4)):
                b: dict[str, Any] = {"required": extra.sample(names + ["zz"], extra.randint(1, min(2, len(names))))}
                if extra.random() < 0.3:
                    b["type"] = "object"
                if extra.random() < 0.3:
                    b["properties"] = {b["required"][0]: {"description": "d"}}
                branches.append(b)
            schema["oneOf"] = branches
            if extra.random() < 0.5:
                del schema["type"]
        yield f"synthetic-keys/{i}", schema


def corpus_synthetic_arrays(count: int = 200, seed: int = 23) -> Iterator[tuple[str, Any]]:
    """Generated array schemas that stress uniqueItems and item automata:
    enumerated strings that extend each other, numbers that share digits or
    differ only in spelling (1 and 1.0), booleans and null, items through
    anyOf, oneOf, allOf and $ref, item bounds, and uniqueItems nested in
    objects and arrays."""
    rng = random.Random(seed)
    scalars: list[Any] = ["a", "ab", "abc", "b", "", "é", "x y", "1", 1, 10, 100, 1.0, 2.5, -1, 0, True, False, None]

    def items() -> Any:
        pick = rng.sample(scalars, rng.randint(1, 8))
        r = rng.random()
        if r < 0.35:
            return {"enum": pick}
        if r < 0.5:
            return {"anyOf": [{"const": v} for v in pick]}
        if r < 0.6:
            return {"oneOf": [{"enum": pick[: len(pick) // 2 + 1]}, {"type": "boolean"}]}
        if r < 0.7:
            return {"allOf": [{"enum": pick}, {"type": rng.choice(["string", "number", "integer"])}]}
        if r < 0.8:
            return {"$ref": "#/$defs/e"}
        if r < 0.9:
            return {"type": rng.choice(["boolean", "null", ["boolean", "null"]])}
        return {"enum": pick, "maxLength": 1}

    def array() -> dict[str, Any]:
        a: dict[str, Any] = {"type": "array", "items": items(), "uniqueItems": rng.random() < 0.85}
        if rng.random() < 0.4:
            a["minItems"] = rng.randint(0, 3)
        if rng.random() < 0.4:
            a["maxItems"] = rng.randint(1, 6)
        return a

    for i in range(count):
        r = rng.random()
        schema: dict[str, Any]
        if r < 0.6:
            schema = array()
        elif r < 0.8:
            schema = {"type": "object", "properties": {"tags": array(), "n": {"type": "integer"}}, "required": ["tags"]}
        else:
            schema = {"type": "array", "items": array(), "maxItems": 3}
        schema["$defs"] = {"e": {"enum": rng.sample(scalars, rng.randint(1, 6))}}
        yield f"synthetic-arrays/{i}", schema


def corpus_synthetic_unions(count: int = 60, seed: int = 29) -> Iterator[tuple[str, Any]]:
    """Generated discriminated unions: anyOf/oneOf of many object branches
    (20 to 400, more than the matcher's old 64-configuration cap) told apart
    by a const or pattern property that may come after other keys, with
    shared properties beside the union, and documented enums (a const and a
    description per branch) under a pattern."""
    rng = random.Random(seed)
    for i in range(count):
        n = rng.choice([20, 70, 150, 400])
        kw = rng.choice(["anyOf", "oneOf"])
        branches = []
        for b in range(n):
            tag: dict[str, Any] = {"const": f"T{b}@1"} if rng.random() < 0.5 else {"pattern": f"^T{b}@[0-9]$"}
            props: dict[str, Any] = {"task": tag}
            if rng.random() < 0.5:
                props["inputs"] = {"type": "object", "properties": {f"in{b % 7}": {"type": "string"}},
                                   "required": [f"in{b % 7}"] if rng.random() < 0.5 else []}
            branches.append({"properties": props, "required": ["task"], "description": f"branch {b}"})
        schema: dict[str, Any] = {"type": "object", kw: branches,
                                  "properties": {"name": {"type": "string"}, "enabled": {"type": "boolean"},
                                                 "task": {"anyOf": [{"const": f"T{b}@1", "description": "d"}
                                                                    for b in range(n)] + [{"type": "string"}]}}}
        if rng.random() < 0.5:
            schema["properties"]["kind"] = {"type": "string", "pattern": "^T",
                                            "oneOf": [{"const": f"T{b}", "title": str(b)} for b in range(n)]}
        yield f"synthetic-unions/{i}", schema


def definitions_of(corpus: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """Each named definition of a schema as a schema of its own, with the
    document's definitions beside it so that its references resolve: real
    subschemas, small enough for the generator where the whole is not."""
    for name, doc in corpus:
        if not isinstance(doc, dict):
            continue
        for kw in ("definitions", "$defs"):
            defs = doc.get(kw)
            if not isinstance(defs, dict):
                continue
            for key in defs:
                sub = {k: doc[k] for k in ("$schema", "definitions", "$defs") if k in doc}
                sub["$ref"] = f"#/{kw}/" + key.replace("~", "~0").replace("/", "~1")
                yield f"{name}#/{kw}/{key}", sub


CORPORA = {
    "maskbench": corpus_maskbench,
    "test-suite": corpus_test_suite,
    "schemastore": corpus_schemastore,
    "schemastore-defs": lambda: definitions_of(corpus_schemastore()),
    "schemastore-full": corpus_schemastore_full,
    "schemastore-full-defs": lambda: definitions_of(corpus_schemastore_full()),
    "metaschemas": corpus_metaschemas,
    "kubernetes": corpus_kubernetes,
    "cloudformation": corpus_cloudformation,
    "pyproject": corpus_pyproject,
    "synthetic-keys": corpus_synthetic_keys,
    "synthetic-arrays": corpus_synthetic_arrays,
    "synthetic-unions": corpus_synthetic_unions,
}


# --- generation --------------------------------------------------------------


use_regex_fallback()


def validator(schema: Any) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


# ECMA-262 (JSON Schema's regex dialect, without the u flag) has ASCII \d and
# \w and its own \s; Python's `re` has Unicode ones. An instance counts as
# valid (or invalid) only when both readings agree, since validators differ.
_ECMA_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_ECMA_CLASS = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}


def ecma_pattern(p: str) -> str:
    out, i, in_class = [], 0, False
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            e = p[i + 1]
            if e.lower() in _ECMA_CLASS:
                body = _ECMA_CLASS[e.lower()]
                if in_class:
                    out.append(body if e.islower() else "\\" + e)  # [\D] stays Python's
                else:
                    out.append(("[" if e.islower() else "[^") + body + "]")
            else:
                out.append(p[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


class _EcmaRe:
    """Stands in for `re` inside jsonschema's keyword code."""

    def __init__(self) -> None:
        import re

        self._re = re
        self._cache: dict[str, Any] = {}

    def search(self, pattern: str, text: str) -> Any:
        if pattern not in self._cache:
            self._cache[pattern] = self._re.compile(ecma_pattern(pattern))
        return self._cache[pattern].search(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._re, name)


def is_valid_both(check: jsonschema.protocols.Validator, value: Any) -> bool | None:
    """True/False when Python's and ECMA's regex readings agree, else None."""
    import jsonschema._keywords as kw
    import jsonschema._utils as ut

    try:
        a = check.is_valid(value)
        saved = kw.re, ut.re
        kw.re = ut.re = _EcmaRe()  # type: ignore[assignment]
        try:
            b = check.is_valid(value)
        finally:
            kw.re, ut.re = saved
    except Exception:
        return None
    return a if a == b else None


class _Timeout(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Timeout()


def draw_instances(schema: Any, count: int, seed: int, timeout_s: float) -> tuple[list[Any], str]:
    """Up to `count` distinct instances from hypothesis-jsonschema."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis_jsonschema import from_schema

    out: list[Any] = []
    seen: set[str] = set()

    def work() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strategy = from_schema(copy.deepcopy(schema))  # it rewrites its argument

            @hypothesis.seed(seed)
            @settings(max_examples=count * 4, database=None, deadline=None, derandomize=False,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            @hypothesis.given(strategy)
            def collect(x: Any) -> None:
                key = json.dumps(x, sort_keys=True)
                if key not in seen and len(out) < count:
                    seen.add(key)
                    out.append(x)

            collect()

    signal.signal(signal.SIGALRM, _alarm)
    sys.unraisablehook = lambda _u: None  # a timeout raised inside a gc callback
    try:
        try:
            # Re-armed every 0.2 s: a raise that lands in a gc callback is swallowed.
            signal.setitimer(signal.ITIMER_REAL, timeout_s, 0.2)
            work()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        return out, "" if out else "timeout"
    except Exception as e:  # the generator's own limits: unsupported keywords, recursion
        return out, f"{type(e).__name__}: {str(e)[:120]}"
    return out, ""


def depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max((depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((depth(x) for x in v), default=0)
    return 0


def shuffled(v: Any, rng: random.Random) -> Any:
    if isinstance(v, dict):
        items = [(k, shuffled(x, rng)) for k, x in v.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(v, list):
        return [shuffled(x, rng) for x in v]
    return v


def spaced(v: Any, rng: random.Random) -> str:
    """Random whitespace runs (≤ 4 bytes) around every structural token."""

    def ws() -> str:
        return "".join(rng.choice(" \t\n\r") for _ in range(rng.choice((0, 0, 1, 1, 2, 4))))

    if isinstance(v, dict):
        if not v:
            return "{" + ws() + "}"
        body = ",".join(f"{ws()}{json.dumps(k, ensure_ascii=False)}{ws()}:{ws()}{spaced(x, rng)}{ws()}"
                        for k, x in v.items())
        return "{" + body + "}"
    if isinstance(v, list):
        if not v:
            return "[" + ws() + "]"
        return "[" + ",".join(f"{ws()}{spaced(x, rng)}{ws()}" for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def spellings(v: Any, rng: random.Random) -> list[str]:
    out = [json.dumps(v, ensure_ascii=False, separators=(",", ":")),
           json.dumps(shuffled(v, rng), ensure_ascii=False)]
    if 2 * depth(v) + 1 <= MAX_WHITESPACE:
        out.append(json.dumps(v, ensure_ascii=False, indent=2))
    out.append(spaced(shuffled(v, rng), rng))
    return list(dict.fromkeys(out))


def mutations(v: Any, rng: random.Random) -> Iterator[Any]:
    """Small edits that often break a schema: each returns a new value."""
    paths: list[tuple[Any, ...]] = []

    def walk(x: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(x, dict):
            for k, y in x.items():
                walk(y, path + (k,))
        elif isinstance(x, list):
            for i, y in enumerate(x):
                walk(y, path + (i,))

    walk(v, ())
    rng.shuffle(paths)
    replacements: list[Any] = [None, True, 0, -1, 1.5, 10**12, "", "x" * 40, "\u00e9", [], {}, [1], {"k": 1}]
    for path in paths[:12]:
        root = copy.deepcopy(v)
        parent, last = None, None
        x = root
        for p in path:
            parent, last, x = x, p, x[p]
        r = rng.random()
        if isinstance(x, dict) and x and r < 0.3:
            del x[rng.choice(list(x))]
        elif isinstance(x, dict) and r < 0.5:
            x["nextok_extra_key"] = rng.choice(replacements)
        elif isinstance(x, list) and x and r < 0.3:
            x.append(copy.deepcopy(x[0]))
        elif isinstance(x, list) and x and r < 0.5:
            x.pop()
        elif isinstance(x, str) and r < 0.4:
            x = x + rng.choice(("a", "0", " ", "-", "Z")) if rng.random() < 0.5 else x[:-1]
            if parent is None:
                root = x
            else:
                parent[last] = x
        elif isinstance(x, (int, float)) and not isinstance(x, bool) and r < 0.4:
            x = rng.choice((x + 1, x - 1, -x, x * 1000, x + 0.5))
            if parent is None:
                root = x
            else:
                parent[last] = x
        else:
            y = rng.choice(replacements)
            if parent is None:
                root = y
            else:
                parent[last] = y
        yield root


GENERATORS = ("hypothesis", "structural")

# Metaschema verdicts on definition containers: every definition of a document
# is a case of its own with the same container, checked once (the corpus keeps
# the containers alive, so their ids stay theirs).
_CHECKED: dict[tuple[int, str], str] = {}


def _check_schema_once(check: jsonschema.protocols.Validator, schema: Any) -> None:
    defs = [schema[kw] for kw in ("definitions", "$defs") if isinstance(schema, dict) and kw in schema]
    if not defs or set(schema) - {"$schema", "definitions", "$defs", "$ref"}:
        check.check_schema(schema)
        return
    key = (id(defs[0]), str(schema.get("$schema")))
    if key not in _CHECKED:
        try:
            check.check_schema(schema)
            _CHECKED[key] = ""
        except Exception as e:  # the same verdict for every definition of the document
            _CHECKED[key] = str(e)[:200] or type(e).__name__
    if _CHECKED[key]:
        raise ValueError(_CHECKED[key])


def encodable(v: Any) -> bool:
    """Whether v is JSON text at all: Python strings may hold lone surrogates
    (hypothesis draws them), which neither UTF-8 nor a JSON parser takes."""
    try:
        json.dumps(v, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def build_case(name: str, schema: Any, count: int, seed: int, timeout_s: float,
               generators: tuple[str, ...] = GENERATORS) -> Case:
    case = Case(name, schema)
    try:
        check = validator(schema)
        _check_schema_once(check, schema)
    except Exception as e:
        case.skipped = f"jsonschema refuses the schema: {str(e)[:80]}"
        return case
    values, why = draw_instances(schema, count, seed, timeout_s) if "hypothesis" in generators else ([], "")
    rng = random.Random(seed)
    good = [v for v in values if encodable(v) and is_valid_both(check, v)]
    if "structural" in generators:
        # The second generator: valid draws beyond hypothesis's, up to `count` more.
        known = {json.dumps(v, sort_keys=True) for v in good}
        extra = 0
        # Validation of large draws against large schemas is the slow part.
        deadline = time.monotonic() + timeout_s
        for v in sample_instances(schema, count, seed, timeout_s=timeout_s / 2):
            k = json.dumps(v, sort_keys=True)
            if time.monotonic() > deadline or len(k) > 20000:
                continue
            if extra < count and k not in known and encodable(v) and is_valid_both(check, v):
                known.add(k)
                good.append(v)
                extra += 1
    case.generated = bool(good)
    if not good:
        case.skipped = why or "the generator found no instance jsonschema accepts"
    for v in good:
        case.valid.extend(spellings(v, rng))
    bad: list[str] = []
    deadline = time.monotonic() + 2 * timeout_s
    for v in good:
        for m in mutations(v, rng):
            if time.monotonic() > deadline:
                break
            if encodable(m) and is_valid_both(check, m) is False:
                bad.append(json.dumps(m, ensure_ascii=False))
                if len(bad) >= 2 * count:
                    break
    # One value of each JSON type in place of the whole instance: what a
    # schema refuses by type (`not: {required}` refuses every non-object)
    # must be refused, whatever the mutations above happened to pick.
    if good:
        for y in (None, True, 0, 1.5, "x", [], {}):
            if is_valid_both(check, y) is False:
                bad.append(json.dumps(y))
    case.invalid = list(dict.fromkeys(bad))
    return case


def refilter(case: Case) -> Case:
    """Cases saved by an older oracle, held to the current validity rules."""
    try:
        check = validator(case.schema)
    except Exception:
        return case
    case.valid = [t for t in case.valid if is_valid_both(check, json.loads(t))]
    case.invalid = [t for t in case.invalid if is_valid_both(check, json.loads(t)) is False]
    return case


# --- the walk ----------------------------------------------------------------


def write_cases(cases: list[Case], folder: pathlib.Path) -> list[pathlib.Path]:
    files = []
    for i, c in enumerate(cases):
        tests = [{"text": t, "valid": True} for t in c.valid] + [{"text": t, "valid": False} for t in c.invalid]
        f = folder / f"case{i:05d}.json"
        f.write_text(json.dumps({"schema": c.schema, "tests": tests, "description": c.name}))
        files.append(f)
    return files


def run_maskbench(cli: str, tokenizer: str, folder: pathlib.Path) -> list[dict[str, Any]]:
    r = subprocess.run([cli, "maskbench", "--tokenizer", tokenizer, "--json", str(folder)],
                       capture_output=True, text=True)
    lines = [json.loads(line) for line in r.stdout.split("\n") if line.startswith("{")]
    if not lines or not lines[-1].get("summary"):
        raise RuntimeError(f"nextok maskbench failed (rc {r.returncode}): {r.stderr[-2000:]}")
    return lines[:-1]


def run_anchor(impl: str, tokenizer: str, cases: list[Case]) -> dict[str, Any]:
    """Another engine (bench/maskbench_anchor.py: llguidance, xgrammar, …) on
    the same generated instances: its summary line."""
    # One spelling per instance, json.dumps's (MaskBench's): engines differ in
    # the whitespace they allow, which is not what this compares.
    def dumps(texts: list[str]) -> list[str]:
        return list(dict.fromkeys(json.dumps(json.loads(t), ensure_ascii=False) for t in texts))

    same = [Case(c.name, c.schema, dumps(c.valid), dumps(c.invalid), c.generated, c.skipped) for c in cases]
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        write_cases(same, folder)
        r = subprocess.run([sys.executable, str(ROOT / "bench" / "maskbench_anchor.py"), "--json", "--impl", impl,
                            "--tokenizer", str(pathlib.Path(tokenizer) / "tokenizer.json"), str(folder)],
                           capture_output=True, text=True)
    lines = [json.loads(line) for line in r.stdout.split("\n") if line.startswith("{")]
    if not lines or not lines[-1].get("summary"):
        raise RuntimeError(f"anchor {impl} failed (rc {r.returncode}): {r.stderr[-2000:]}")
    keep = ("impl", "schemas", "passing", "compile_error", "valid_rejected", "invalid_accepted", "timeout")
    return {k: lines[-1].get(k) for k in keep}


def check_cases(cli: str, tokenizer: str, cases: list[Case], label: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        write_cases(cases, folder)
        lines = run_maskbench(cli, tokenizer, folder)
    by_file = {pathlib.Path(line["file"]).name: line for line in lines}
    failures: list[dict[str, Any]] = []
    stats = Counter()
    errors: Counter[str] = Counter()
    for i, c in enumerate(cases):
        line = by_file.get(f"case{i:05d}.json")
        stats["schemas"] += 1
        stats["generated"] += c.generated
        if line is None:
            failures.append({"case": c.name, "kind": "missing", "vocab": label})
            continue
        if not line.get("compiled"):
            stats["compile_error"] += 1
            err = line.get("error", "")
            errors[err.split(": ", 1)[-1][:70]] += 1
            if c.generated and UNSAT in err:
                stats["unsat_verdict_wrong"] += 1
                failures.append({"case": c.name, "kind": "unsat_verdict", "vocab": label, "error": err,
                                 "instance": c.valid[0][:300]})
            continue
        stats["compiled"] += 1
        stats["passing"] += line.get("passing", False)
        stats["valid_tested"] += len(c.valid)
        stats["invalid_tested"] += len(c.invalid)
        stats["valid_rejected"] += line.get("valid_rejected", 0)
        stats["invalid_accepted"] += line.get("invalid_accepted", 0)
        stats["schemas_with_valid_rejected"] += line.get("valid_rejected", 0) > 0
        stats["schemas_with_invalid_accepted"] += line.get("invalid_accepted", 0) > 0
        stats["mask_mismatch"] += line.get("mask_mismatch", 0)
        for f in line.get("failures", []):
            if "mask_mismatch" in f:
                kind = "mask_mismatch"  # the mask allowed a token the matcher refused
            else:
                kind = "valid_rejected" if f["valid"] else "invalid_accepted"
            failures.append({"case": c.name, "kind": kind, "vocab": label, "token": f["token"],
                             "text": f["text"], "schema": json.dumps(c.schema)[:400]})
    summary = {"vocab": label, **stats, "top_compile_errors": errors.most_common(8)}
    return summary, failures


def build_corpus(names: list[str], count: int, seed: int, timeout_s: float, limit: int,
                 slice_seed: int | None, generators: tuple[str, ...] = GENERATORS) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for corpus in names:
        schemas = list(CORPORA[corpus]())
        if slice_seed is not None:
            random.Random(slice_seed).shuffle(schemas)
        if limit:
            schemas = schemas[:limit]
        cases = []
        for k, (name, schema) in enumerate(schemas):
            cases.append(build_case(name, schema, count, seed + k, timeout_s, generators))
            if k % 100 == 99:
                print(f"[oracle] {corpus}: generated {k + 1}/{len(schemas)}", file=sys.stderr, flush=True)
        out[corpus] = cases
    return out


def main() -> int:
    sys.setrecursionlimit(10000)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--tokenizer", action="append", required=True, help="tokenizer dir (repeatable)")
    ap.add_argument("--corpus", action="append", default=[], help="|".join(CORPORA) + "|all")
    ap.add_argument("--count", type=int, default=4, help="valid instances per schema")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=4.0, help="generator seconds per schema")
    ap.add_argument("--limit", type=int, default=0, help="schemas per corpus (0: all)")
    ap.add_argument("--slice-seed", type=int, default=None, help="shuffle before --limit")
    ap.add_argument("--out", default="", help="folder for failures.jsonl")
    ap.add_argument("--save-cases", default="", help="write the generated cases (JSON) here")
    ap.add_argument("--anchor", action="append", default=[], help="also run llguidance / xgrammar on the same cases")
    ap.add_argument("--generator", action="append", default=[], choices=GENERATORS,
                    help="instance generators (repeatable; default both)")
    ap.add_argument("--load-cases", default="", help="check cases saved earlier instead of generating")
    a = ap.parse_args()
    names = list(CORPORA) if not a.corpus or "all" in a.corpus else a.corpus
    if a.load_cases:
        saved = json.loads(pathlib.Path(a.load_cases).read_text())
        corpora = {k: [refilter(Case(**c)) for c in v] for k, v in saved.items() if k in names}
    else:
        corpora = build_corpus(names, a.count, a.seed, a.timeout, a.limit, a.slice_seed,
                               tuple(a.generator) or GENERATORS)
    if a.save_cases:
        pathlib.Path(a.save_cases).write_text(
            json.dumps({k: [c.__dict__ for c in v] for k, v in corpora.items()}, ensure_ascii=False))
    all_failures = []
    for corpus, cases in corpora.items():
        for tok in a.tokenizer:
            summary, failures = check_cases(a.cli, tok, cases, pathlib.Path(tok).name)
            print(json.dumps({"corpus": corpus, **summary}), flush=True)
            all_failures.extend({"corpus": corpus, **f} for f in failures)
            for impl in a.anchor:
                print(json.dumps({"corpus": corpus, "vocab": pathlib.Path(tok).name,
                                  **run_anchor(impl, tok, cases)}), flush=True)
    if a.out:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "failures.jsonl").write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in all_failures))
    return 1 if all_failures else 0


if __name__ == "__main__":
    sys.exit(main())
