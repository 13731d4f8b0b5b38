"""nextok.hf processors with the real transformers package: a tiny Llama
with random weights over the Llama-3.1 vocabulary generates on the CPU, and
every output must validate against the schema (jsonschema)."""

from __future__ import annotations

import json

import nextok
import pytest
from conftest import require_module
from nextok.hf import JsonObjectLogitsProcessor, JsonSchemaLogitsProcessor

SCHEMA = {
    "type": "object",
    "properties": {
        # Bounded so that a random model finishes: numbers are not, as 7,
        # 7.0 and 7.000… are all the integer 7 (and -0.0… equals 0).
        "id": {"enum": ["a1", "b22", None]},
        "tag": {"type": "string", "maxLength": 6, "pattern": "^[a-z]*$"},
        "ok": {"type": "boolean"},
        "kind": {"enum": ["alpha", "beta", "gamma"]},
    },
    "required": ["id", "ok", "kind", "tag"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def hf(llama_dir):
    torch = require_module("torch")
    transformers = require_module("transformers")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(llama_dir / "tokenizer.json"), eos_token="<|eot_id|>"
    )
    tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.eos_token_id,
        bos_token_id=128000,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    return torch, transformers, tok, model


def generate(hf, processor, **kw):
    torch, _, tok, model = hf
    prompts = ["Give me JSON:", "A record", "x"]
    inputs = tok(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(
            **inputs, logits_processor=[processor], pad_token_id=tok.eos_token_id, **kw
        )
    return [row[inputs["input_ids"].shape[1] :].tolist() for row in out], tok


@pytest.mark.parametrize("sampling", [False, True])
def test_generate_with_the_schema_processor(hf, sampling: bool) -> None:
    jsonschema = require_module("jsonschema")
    torch = hf[0]
    torch.manual_seed(1)
    proc = JsonSchemaLogitsProcessor(SCHEMA, hf[2], max_whitespace=0)
    kw = {"do_sample": True, "temperature": 1.5, "top_k": 0} if sampling else {"do_sample": False}
    rows, tok = generate(hf, proc, max_new_tokens=60, **kw)
    for ids in rows:
        assert tok.eos_token_id in ids, f"unfinished: {tok.decode(ids)!r}"
        text = tok.decode(ids[: ids.index(tok.eos_token_id)])
        jsonschema.validate(json.loads(text), SCHEMA)
    # The last row to finish never shows its EOS to the processor (generate
    # stops), so its matcher is accepting rather than terminated.
    assert all(m.is_terminated() or m.is_accepting() for m in proc.matchers)


def test_generate_with_the_json_object_processor(hf) -> None:
    torch = hf[0]
    torch.manual_seed(2)
    proc = JsonObjectLogitsProcessor(hf[2], vocab_size=hf[3].config.vocab_size)
    rows, tok = generate(hf, proc, max_new_tokens=24, do_sample=True, temperature=2.0)
    grammar = proc.grammar
    assert grammar is not None
    for ids in rows:
        m = nextok.Matcher(grammar)
        assert m.validate_tokens(ids) == len(ids) or (
            tok.eos_token_id in ids and m.validate_tokens(ids) >= ids.index(tok.eos_token_id) + 1
        )
        assert tok.decode(ids).lstrip().startswith("{")


def test_logits_processor_list_call_path(hf) -> None:
    """transformers' LogitsProcessorList drives the processor with torch tensors."""
    torch, transformers, tok, _ = hf
    proc = JsonSchemaLogitsProcessor(json.dumps(SCHEMA), tok, max_whitespace=0)
    lpl = transformers.LogitsProcessorList([proc])
    ids = torch.tensor([[128000, 35]], dtype=torch.long)
    scores = torch.zeros((1, len(tok)))
    out = lpl(ids, scores)
    allowed = torch.nonzero(torch.isfinite(out[0])).flatten().tolist()
    assert allowed == proc.matchers[0].allowed_token_ids() and allowed
    assert all(tok.decode([t]).startswith("{") for t in allowed)
    brace = tok.convert_tokens_to_ids('{"')
    out = lpl(torch.cat([ids, torch.tensor([[brace]])], dim=1), torch.zeros((1, len(tok))))
    assert proc.matchers[0].num_accepted == 1
    assert not torch.isfinite(out[0, brace])  # '{"' cannot follow '{"'


def test_reordered_rows_are_refused(hf) -> None:
    torch, _, tok, _ = hf
    proc = JsonObjectLogitsProcessor(tok)
    a, b = tok.convert_tokens_to_ids("{"), tok.convert_tokens_to_ids('{"')
    prompt = torch.tensor([[1, 2], [1, 2]])
    proc(prompt, torch.zeros((2, len(tok))))
    proc(torch.cat([prompt, torch.tensor([[a], [b]])], 1), torch.zeros((2, len(tok))))
    swapped = torch.cat([prompt, torch.tensor([[b, 220], [a, 220]])], 1)
    with pytest.raises(NotImplementedError, match="beam"):
        proc(swapped, torch.zeros((2, len(tok))))
    proc.reset()
    proc(prompt, torch.zeros((2, len(tok))))  # a new generation starts cleanly
    assert [m.num_accepted for m in proc.matchers] == [0, 0]


def test_refused_token_surfaces_as_nextok_error(hf) -> None:
    torch, _, tok, _ = hf
    proc = JsonObjectLogitsProcessor(tok)
    prompt = torch.tensor([[1]])
    proc(prompt, torch.zeros((1, len(tok))))
    bad = tok.convert_tokens_to_ids("]")
    with pytest.raises(nextok.NextokError):
        proc(torch.tensor([[1, bad]]), torch.zeros((1, len(tok))))
    assert proc.matchers[0].num_accepted == 0
