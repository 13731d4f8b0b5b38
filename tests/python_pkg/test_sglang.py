"""nextok.sglang against the real sglang package: registration through
register_grammar_backend, compilation through BaseGrammarBackend's cache,
the batch mask fill through SamplingBatchInfo.update_regex_vocab_mask,
masks applied by GrammarMask.apply and by SGLang's llguidance helper, and
accept / rollback / copy / jump-forward on the Llama-3.1 vocabulary."""

from __future__ import annotations

import json
import types

import pytest
from conftest import SMALL_TOKENS, require_module
from engines_util import ONE_TAG, ONE_TAG_TEXT, SCHEMA

ENV = "NEXTOK_REQUIRE_ENGINES"


@pytest.fixture(scope="module")
def sgl(llama_dir):
    torch = require_module("torch", ENV)
    require_module("sglang", ENV)
    transformers = require_module("transformers", ENV)
    jsonschema = require_module("jsonschema", ENV)
    import nextok.sglang
    from sglang.srt.constrained import base_grammar_backend

    nextok.sglang.register()
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(llama_dir / "tokenizer.json"), eos_token="<|eot_id|>"
    )
    init = base_grammar_backend.GRAMMAR_BACKEND_REGISTRY["nextok"]
    backend = init(
        types.SimpleNamespace(constrained_json_disable_any_whitespace=False),
        tok,
        len(tok),
        {tok.eos_token_id},
    )
    return types.SimpleNamespace(
        torch=torch, tok=tok, backend=backend, jsonschema=jsonschema, vocab=len(tok)
    )


def compile_json(sgl, schema) -> object:
    key = ("json", schema if isinstance(schema, str) else json.dumps(schema))
    value, cache_hit = sgl.backend.get_cached_or_future_value(key, False)
    if not cache_hit:
        value = value.result(timeout=60)
        sgl.backend.set_cache(key, value)
        value = value.copy()
    return value


def test_register_adds_the_cli_choice_and_the_backend(sgl):
    import nextok.sglang
    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES

    assert "nextok" in GRAMMAR_BACKEND_CHOICES
    nextok.sglang.register()  # idempotent
    assert GRAMMAR_BACKEND_CHOICES.count("nextok") == 1
    assert isinstance(sgl.backend, nextok.sglang.NextokGrammarBackend)


def test_batch_generation_through_sglang_mask_paths_validates(sgl):
    import nextok.sglang
    from sglang.srt.sampling.sampling_batch_info import SamplingBatchInfo

    torch = sgl.torch
    array_schema = {"type": "array", "items": {"enum": [1, 2, 3]}, "maxItems": 4}
    grammars = [compile_json(sgl, SCHEMA), None, compile_json(sgl, array_schema)]
    assert all(isinstance(g, nextok.sglang.NextokGrammar) for g in (grammars[0], grammars[2]))
    # A second request for the same schema is a cache hit and an independent copy.
    twin, hit = sgl.backend.get_cached_or_future_value(("json", json.dumps(SCHEMA)), False)
    assert hit and twin is not grammars[0] and twin.matcher is not grammars[0].matcher
    grammars.append(twin)
    schemas = [SCHEMA, None, array_schema, SCHEMA]

    gen = torch.Generator().manual_seed(3)
    outputs: list[list[int]] = [[] for _ in grammars]
    for _step in range(200):
        live = [g for g in grammars if g is not None and not g.is_terminated()]
        if not live:
            break
        # SGLang's own batch path: allocate, batched fill (nextok's worker
        # pool), move; rows of finished or unconstrained requests stay open.
        info = types.SimpleNamespace(
            grammars=grammars,
            vocab_size=sgl.vocab,
            temperatures=torch.ones((len(grammars), 1)),
            device="cpu",
        )
        SamplingBatchInfo.update_regex_vocab_mask(info)
        mask = info.grammar_mask.vocab_mask
        assert mask.dtype == torch.int32 and mask.shape == (len(grammars), (sgl.vocab + 31) // 32)
        assert (mask[1] == -1).all()
        for row, g in enumerate(grammars):
            if g is not None and not g.is_terminated():
                single = g.allocate_vocab_mask(sgl.vocab, 1, "cpu")
                g.fill_vocab_mask(single, 0)
                assert torch.equal(single[0], mask[row])
        logits = torch.randn((len(grammars), sgl.vocab), generator=gen) * 4
        free_row = logits[1].clone()
        info.grammar_mask.apply(logits)
        assert torch.equal(logits[1], free_row)
        tokens = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0].tolist()
        for row, g in enumerate(grammars):
            if g is not None and not g.is_terminated():
                g.accept_token(int(tokens[row]))
                outputs[row].append(int(tokens[row]))
    for row, g in enumerate(grammars):
        if g is None:
            continue
        assert g.is_terminated(), f"row {row} did not finish"
        assert outputs[row][-1] == sgl.tok.eos_token_id
        value = json.loads(sgl.tok.decode(outputs[row][:-1]))
        sgl.jsonschema.validate(value, schemas[row])


def test_masks_work_with_sglang_llguidance_helper(sgl):
    from sglang.srt.constrained.llguidance_backend import GuidanceGrammar

    torch = sgl.torch
    g = compile_json(sgl, SCHEMA)
    mask = g.allocate_vocab_mask(sgl.vocab, 2, "cpu")
    g.fill_vocab_mask(mask, 1)
    mask = g.move_vocab_mask(mask, "cpu")
    logits = torch.randn((2, sgl.vocab), generator=torch.Generator().manual_seed(1))
    ours = logits.clone()
    g.apply_vocab_mask(ours, mask)
    GuidanceGrammar.apply_vocab_mask(logits, mask)  # llguidance's torch kernel
    assert torch.equal(ours, logits)
    allowed = torch.isfinite(ours[1]).nonzero()[:, 0].tolist()
    assert allowed == g.matcher.allowed_token_ids()
    assert torch.isfinite(ours[0]).all()  # row 0 was left all-allowed
    g.reset_vocab_mask(mask)
    assert (mask == -1).all()
    with pytest.raises(TypeError):
        g.reset_vocab_mask(torch.zeros((1, 4), dtype=torch.int64))


def test_accept_rollback_copy_and_refusal(sgl):
    g = compile_json(sgl, {"type": "object", "properties": {"a": {"type": "null"}}})
    good = sgl.tok.encode('{"a": null}', add_special_tokens=False)
    for t in good[:3]:
        g.accept_token(t)
    fork = g.copy()
    g.rollback(2)
    assert g.matcher.num_accepted == 1 and fork.matcher.num_accepted == 3
    with pytest.raises(ValueError, match="refused"):
        fork.accept_token(sgl.tok.encode(" true", add_special_tokens=False)[0])
    for t in good[3:]:
        fork.accept_token(t)
    fork.accept_token(sgl.tok.eos_token_id)
    assert fork.is_terminated()
    fork.accept_token(12345)  # ignored once terminated, as SGLang expects
    g.jump_and_retokenize(good[:1], good[:3], -1)
    assert g.matcher.num_accepted == 3
    with pytest.raises(ValueError):
        g.rollback(-1)


def test_invalid_and_unsupported_grammars(sgl):
    from sglang.srt.constrained.base_grammar_backend import InvalidGrammarObject

    bad = compile_json(sgl, '{"type": "object", "minProperties": "x"}')
    assert isinstance(bad, InvalidGrammarObject) and bad.error_message
    assert isinstance(compile_json(sgl, "{not json"), InvalidGrammarObject)
    value, _ = sgl.backend.get_cached_or_future_value(("structural_tag", "{}"), False)
    assert isinstance(value.result(timeout=60), InvalidGrammarObject)
    value, _ = sgl.backend.get_cached_or_future_value(("regex", "[a-z"), False)
    assert isinstance(value.result(timeout=60), InvalidGrammarObject)
    value, _ = sgl.backend.get_cached_or_future_value(("ebnf", "root ::= missing"), False)
    assert isinstance(value.result(timeout=60), InvalidGrammarObject)


def test_regex_ebnf_and_structural_tag_requests_generate_matching_text(sgl):
    import re

    import nextok.sglang

    torch = sgl.torch
    cases = [
        ("regex", r"[a-z]{2,5}@[0-9]{1,2}", r"[a-z]{2,5}@[0-9]{1,2}"),
        # Finite languages, so random logits reach EOS within the steps.
        (
            "ebnf",
            'root ::= "[" [0-9] [0-9]? ("," [0-9] [0-9]?)? "]"',
            r"\[[0-9]{1,2}(,[0-9]{1,2})?\]",
        ),
        # The same field with a Lark grammar (no "::=" rule).
        (
            "ebnf",
            'start: "[" D D? ("," D D?)? "]"\nD: "0".."9"',
            r"\[[0-9]{1,2}(,[0-9]{1,2})?\]",
        ),
        # XGrammar's structural tag: exactly one tag.
        ("structural_tag", json.dumps(ONE_TAG), ONE_TAG_TEXT),
    ]
    for kind, spec, pattern in cases:
        value, _ = sgl.backend.get_cached_or_future_value((kind, spec), False)
        g = value.result(timeout=60)
        assert isinstance(g, nextok.sglang.NextokGrammar), g
        gen = torch.Generator().manual_seed(5)
        out: list[int] = []
        mask = g.allocate_vocab_mask(sgl.vocab, 1, "cpu")
        for _step in range(60):
            if g.is_terminated():
                break
            g.fill_vocab_mask(mask, 0)
            logits = torch.randn((1, sgl.vocab), generator=gen) * 4
            g.apply_vocab_mask(logits, mask)
            token = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[0, 0])
            g.accept_token(token)
            out.append(token)
        assert g.is_terminated() and out[-1] == sgl.tok.eos_token_id, kind
        text = sgl.tok.decode(out[:-1])
        assert re.fullmatch(pattern, text), (kind, text)
    # "$$ANY$$" is any JSON value, arrays included.
    anything = compile_json(sgl, "$$ANY$$")
    assert anything.matcher.validate_tokens(sgl.tok.encode("[1]", add_special_tokens=False)) == 3


def test_jump_forward_returns_forced_tokens(small_info):
    require_module("sglang", ENV)
    import nextok
    import nextok.sglang

    schema = {
        "type": "object",
        "properties": {"ab": {"type": "null"}},
        "required": ["ab"],
        "additionalProperties": False,
    }
    g = nextok.sglang.NextokGrammar(
        nextok.Grammar.json_schema(schema, small_info, max_whitespace=0)
    )
    assert g.try_jump_forward(None) is None  # '{' or '{"'
    g.accept_token(SMALL_TOKENS.index(b"{"))
    helper = g.try_jump_forward(None)
    assert helper == ([SMALL_TOKENS.index(b'"')], "")
    assert g.jump_forward_str_state(helper) == ("", -1)
    assert g.matcher.num_accepted == 1  # probing does not move the state
