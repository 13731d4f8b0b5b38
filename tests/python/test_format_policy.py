"""The `format` policy against jsonschema's FormatChecker.

Every format name jsonschema checks must be either enforced soundly (random
constrained walks all pass jsonschema's checker) or refused in strict mode.
A name no draft defines is an annotation that no validator checks, so the
engine must compile it and leave the string free (a warning, not an error).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import tempfile

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZERS = pathlib.Path(
    os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers")
)


def generate(cli: str, schemas: list[dict], count: int) -> list[list[dict]]:
    """json-generate rows for each schema, from one process."""
    with tempfile.TemporaryDirectory() as tmp:
        f = pathlib.Path(tmp) / "s.jsonl"
        f.write_text("".join(json.dumps(x) + "\n" for x in schemas))
        args = [cli, "json-generate", "--tokenizer", str(TOKENIZERS / "llama3.1")]
        args += ["--schemas-jsonl", str(f), "--count", str(count), "--max-tokens", "64"]
        args += ["--seed", "11", "--close-p", "0.2"]
        r = subprocess.run(args, capture_output=True, text=True, check=True)
    out: list[list[dict]] = [[] for _ in schemas]
    for line in r.stdout.split("\n"):
        if line:
            row = json.loads(line)
            out[row["schema"]].append(row)
    return out


def compile_error(rows: list[dict]) -> str | None:
    return next((row["error"] for row in rows if "error" in row), None)


def outputs(rows: list[dict]) -> list[str]:
    return [json.loads(row["text"]) for row in rows if row.get("complete")]


# (declared draft, its validator, format name): each draft's own checker,
# since drafts read some names differently (draft 3's `time` has no offset).
LATER = [jsonschema.Draft7Validator, jsonschema.Draft202012Validator]
LATER_NAMES = {n for v in LATER for n in v.FORMAT_CHECKER.checkers}
CASES = [(v, n) for v in LATER for n in sorted(v.FORMAT_CHECKER.checkers)] + [
    (jsonschema.Draft3Validator, n)
    for n in sorted(jsonschema.Draft3Validator.FORMAT_CHECKER.checkers)
    if n not in LATER_NAMES
]


# Names seen in real schemas that no draft defines.
NONSTANDARD = ["url", "path", "topic", "semver", "cidr", "country-code", "positiveInteger", ""]


def schema_of(validator: type[jsonschema.protocols.Validator], name: str) -> dict:
    return {"$schema": validator.META_SCHEMA["$schema"], "type": "string", "format": name}


@pytest.fixture(scope="module")
def walks(cli: str) -> dict[tuple[str, str], list[dict]]:
    keys = [(v.__name__, n) for v, n in CASES] + [("free", n) for n in NONSTANDARD + [None]]
    schemas = [schema_of(v, n) for v, n in CASES]
    schemas += [{"type": "string", "format": n} for n in NONSTANDARD] + [{"type": "string"}]
    return dict(zip(keys, generate(cli, schemas, 40), strict=True))


@pytest.mark.parametrize(("validator", "name"), CASES)
def test_checked_formats_are_enforced_or_refused(
    walks: dict, validator: type[jsonschema.protocols.Validator], name: str
) -> None:
    rows = walks[(validator.__name__, name)]
    error = compile_error(rows)
    if error is not None:
        assert "format" in error, error  # refused, naming the keyword
        return
    texts = outputs(rows)
    assert len(texts) >= 3, (name, rows[:3])  # digit runs make some walks long
    bad = [t for t in texts if not validator.FORMAT_CHECKER.conforms(t, name)]
    assert not bad, (name, bad[:5])


def test_nonstandard_formats_constrain_nothing(cli: str, walks: dict) -> None:
    assert not set(NONSTANDARD) & set(jsonschema.FormatChecker.checkers)  # none is checked
    for name in NONSTANDARD:
        assert compile_error(walks[("free", name)]) is None, name
    # Every string a plain string schema generated is accepted under each name.
    free = [{"data": t, "valid": True} for t in outputs(walks[("free", None)])]
    assert len(free) >= 20
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(NONSTANDARD):
            doc = {"schema": {"type": "string", "format": name}, "tests": free}
            (pathlib.Path(tmp) / f"f{k}.json").write_text(json.dumps(doc))
        args = [cli, "maskbench", "--json", "--quiet", "--tokenizer", str(TOKENIZERS / "llama3.1")]
        r = subprocess.run([*args, tmp], capture_output=True, text=True, check=False)
    summary = json.loads(r.stdout.strip().split("\n")[-1])
    assert summary["passing"] == len(NONSTANDARD), r.stdout[-2000:]
