"""Soundness of the JSON-Schema constraint against Python `jsonschema`.

Random constrained walks (`nextok json-generate`) under schemas drawn from
the shared datasets (JSON-Schema-Test-Suite draft 2020-12 and MaskBench),
with the Llama-3.1 vocabulary: every output that the engine lets finish
(EOS allowed) must validate, formats included. Also the json_object mode.
"""
import collections
import json
import os
import pathlib
import random
import subprocess

import jsonschema
import pytest
from pattern_engines import use_regex_fallback

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("NEXTOK_SHARED", ROOT.parent / "shared"))
TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", ROOT / "build" / "dev" / "tokenizers"))
MIN_COMPLETE = int(os.environ.get("NEXTOK_SOUNDNESS_MIN", "10000"))


def dataset_schemas():
    out = []
    suite = SHARED / "datasets" / "json-schema-test-suite" / "tests" / "draft2020-12"
    for f in sorted(suite.rglob("*.json")):
        for group in json.loads(f.read_text()):
            out.append((f"{f.name}#{group['description']}", group["schema"]))
    for f in sorted((SHARED / "datasets" / "maskbench").glob("*.json")):
        out.append((f.name, json.loads(f.read_text())["schema"]))
    return out


use_regex_fallback()


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def generate(cli, tmp_path, schemas, count, seed, extra=()):
    path = tmp_path / "schemas.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in schemas))
    r = subprocess.run(
        [cli, "json-generate", "--tokenizer", str(TOKENIZERS / "llama3.1"), "--schemas-jsonl", str(path),
         "--count", str(count), "--seed", str(seed), "--max-tokens", "160", *extra],
        capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.split("\n") if line]  # not splitlines: U+2028 is data


def test_constrained_outputs_validate(cli, tmp_path):
    schemas = dataset_schemas()
    random.Random(7).shuffle(schemas)
    compiled = complete = 0
    failures = []
    batch = 200
    for start in range(0, len(schemas), batch):
        chunk = schemas[start:start + batch]
        lines = generate(cli, tmp_path, [s for _, s in chunk], count=8, seed=start)
        for line in lines:
            name, schema = chunk[line["schema"]]
            if "error" in line:
                continue
            if line["i"] == 0:
                compiled += 1
            if line.get("dead_end"):
                failures.append((name, line["text"][:200], "dead end: no token and no EOS allowed"))
            if not line["complete"]:
                continue
            complete += 1
            try:
                value = json.loads(line["text"])
            except ValueError as e:
                failures.append((name, line["text"][:200], f"not JSON: {e}"))
                continue
            errors = list(validator(schema).iter_errors(value))
            if errors:
                failures.append((name, line["text"][:200], errors[0].message[:200]))
        if complete >= MIN_COMPLETE:
            break
    print(f"schemas compiled {compiled}, complete outputs validated {complete}, failures {len(failures)}")
    assert not failures, failures[:10]
    assert complete >= MIN_COMPLETE


def test_json_object_outputs_are_objects(cli, tmp_path):
    lines = generate(cli, tmp_path, [], count=300, seed=11, extra=("--json-object",))
    done = [l for l in lines if l["complete"]]
    assert len(done) > 100
    for line in done:
        assert isinstance(json.loads(line["text"]), dict), line["text"][:200]


FORMATS = ["date-time", "date", "time", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
           "uri", "uri-reference", "json-pointer", "relative-json-pointer", "uri-template", "uuid"]


def test_every_format_output_validates(cli, tmp_path):
    """Each enforced format, alone: random constrained strings must pass
    jsonschema's FormatChecker (with the format extras installed)."""
    schemas = [{"type": "string", "format": f} for f in FORMATS]
    lines = generate(cli, tmp_path, schemas, count=200, seed=5, extra=())
    done = collections.Counter()
    failures = []
    for line in lines:
        if not line.get("complete"):
            continue
        schema = schemas[line["schema"]]
        done[schema["format"]] += 1
        value = json.loads(line["text"])
        if not validator(schema).is_valid(value):
            failures.append((schema["format"], value))
    assert not failures, failures[:10]
    assert all(done[f] >= 100 for f in FORMATS), done
