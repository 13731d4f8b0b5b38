"""The generative oracle (schema_oracle.py) on a bounded slice of every corpus.

Instances drawn by hypothesis-jsonschema and by the structural sampler
(schema_sampler.py) that Python `jsonschema` accepts must
be accepted token by token with the Llama-3.1 and Qwen3 vocabularies (EOS at
the end), in several spellings; mutations it rejects must be refused; and no
schema the generator found an instance for may be called unsatisfiable. The
full corpus is a documented command (docs/constraint-engine.md).
"""

from __future__ import annotations

import os
import pathlib

import pytest

import schema_oracle as so

TOKENIZERS = pathlib.Path(os.environ.get("NEXTOK_TOKENIZERS", so.ROOT / "build" / "release" / "tokenizers"))
# Schemas per corpus in the slice; the full run uses them all.
SLICE = {"maskbench": 25, "test-suite": 40, "schemastore-defs": 30, "schemastore-full": 30, "kubernetes": 30,
         "cloudformation": 30, "pyproject": 10, "synthetic-keys": 30, "synthetic-arrays": 30}


@pytest.fixture(scope="module")
def corpora() -> dict[str, list[so.Case]]:
    out = {}
    for corpus, n in SLICE.items():
        out.update(so.build_corpus([corpus], count=3, seed=11, timeout_s=3.0, limit=n, slice_seed=2026))
    return out


@pytest.mark.parametrize("vocab", ["llama3.1", "qwen3"])
def test_generated_instances_agree_with_jsonschema(cli: str, corpora: dict[str, list[so.Case]], vocab: str) -> None:
    tokenizer = TOKENIZERS / vocab
    assert (tokenizer / "tokenizer.json").exists(), f"missing fixture {tokenizer}"
    failures = []
    valid = invalid = compiled = 0
    for corpus, cases in corpora.items():
        summary, found = so.check_cases(cli, str(tokenizer), cases, vocab)
        print(corpus, summary)
        failures += found
        valid += summary.get("valid_tested", 0)
        invalid += summary.get("invalid_tested", 0)
        compiled += summary.get("compiled", 0)
    # The slice must exercise the engine, or passing would mean nothing; the
    # structural sampler reaches the real SchemaStore documents that
    # hypothesis-jsonschema mostly gives up on.
    assert compiled >= 80 and valid >= 500 and invalid >= 150, (compiled, valid, invalid)
    assert sum(c.generated for c in corpora["schemastore-full"]) >= 20
    assert not failures, failures[:5]


def test_oracle_catches_a_refusing_engine(cli: str, tmp_path: pathlib.Path) -> None:
    """The oracle's own check: a schema narrower than the generator's makes
    the walk report the refused instances (so a real refusal would be seen)."""
    wide = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1000}},
            "required": ["n"]}
    case = so.build_case("self-check", wide, count=6, seed=3, timeout_s=10.0)
    assert case.valid and case.invalid
    narrow = dict(case.__dict__)
    narrow["schema"] = {**wide, "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 0}}}
    summary, failures = so.check_cases(cli, str(TOKENIZERS / "llama3.1"), [so.Case(**narrow)], "llama3.1")
    assert summary["valid_rejected"] > 0
    assert any(f["kind"] == "valid_rejected" for f in failures)
