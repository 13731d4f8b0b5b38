"""Helpers shared by the vLLM / SGLang tests and bench/python_vllm_fill.py."""

from __future__ import annotations

import pathlib
import shutil

# Bounded so that a random model finishes: every value is an enum, a short
# lowercase string or a boolean (numbers are not bounded: 7, 7.0, 7.000...).
SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"enum": ["a1", "b22", None]},
        "tag": {"type": "string", "maxLength": 6, "pattern": "^[a-z]*$"},
        "ok": {"type": "boolean"},
        "kind": {"enum": ["alpha", "beta", "gamma"]},
    },
    "required": ["id", "ok", "kind", "tag"],
    "additionalProperties": False,
}

# XGrammar's structural tag: exactly one tag around one of two JSON strings,
# a finite language (a JSON number would let random logits go on: 7.000...).
TAG = {
    "type": "tag",
    "begin": "<r>",
    "end": "</r>",
    "content": {"type": "json_schema", "json_schema": {"enum": ["a1", "b22"]}},
}
ONE_TAG = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<r"],
        "at_least_one": True,
        "stop_after_first": True,
        "tags": [TAG],
    },
}
ONE_TAG_TEXT = r'<r>"(a1|b22)"</r>'


def build_tiny_llama(dst: pathlib.Path, tokenizer_dir: pathlib.Path) -> pathlib.Path:
    """A 2-layer Llama with random weights over the Llama-3.1 vocabulary, saved
    with its tokenizer (vLLM's CPU attention needs head_dim 64, not 16)."""
    import torch
    import transformers

    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(tokenizer_dir / "tokenizer.json", dst / "tokenizer.json")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(dst / "tokenizer.json"),
        eos_token="<|eot_id|>",
        bos_token="<|begin_of_text|>",
    )
    tok.save_pretrained(dst)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
    )
    transformers.LlamaForCausalLM(config).eval().save_pretrained(dst)
    return dst
