"""The 100-tool call schema of nextok_structural_tag_bench, compiled by the
anchors: XGrammar (GrammarCompiler.compile_json_schema, one thread, its
cache off) and llguidance (an LLMatcher on the schema), each followed by the
first token mask, as nextok's `ttfm` counts it. Prints JSON lines, medians
over --reps fresh compiles; one optional parameter's name differs per
repetition (as in nextok_structural_tag_bench), so no compile is served
from a cache.

  python bench/tool_compile_anchor.py build/release/tokenizers/llama3.1
"""
from __future__ import annotations

import json
import statistics
import sys
import time


def tool_object(i: int, rep: int) -> dict:
    return {"type": "object", "properties": {
        "name": {"const": f"tool_{i}"},
        "arguments": {"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            f"q{rep}_{i}": {"type": "boolean"}},
            "required": ["city", "unit"], "additionalProperties": False}},
        "required": ["name", "arguments"], "additionalProperties": False}


def call_schema(tools: int, rep: int) -> str:
    return json.dumps({"anyOf": [tool_object(i, rep) for i in range(tools)]})


def main() -> None:
    tok_dir = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    import torch  # noqa: F401 - xgrammar's bitmask helpers
    import xgrammar as xgr
    from transformers import AutoTokenizer
    import llguidance
    import llguidance.hf
    import llguidance.torch

    hf = AutoTokenizer.from_pretrained(tok_dir)
    info = xgr.TokenizerInfo.from_huggingface(hf)
    llg_tok = llguidance.hf.from_tokenizer(hf)
    for tools in (1, 10, 100):
        xs, ls = [], []
        for rep in range(reps):
            schema = call_schema(tools, rep + 1000 * tools)
            t0 = time.perf_counter()
            compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
            matcher = xgr.GrammarMatcher(compiler.compile_json_schema(schema))
            mask = xgr.allocate_token_bitmask(1, info.vocab_size)
            matcher.fill_next_token_bitmask(mask)
            xs.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
            m = llguidance.LLMatcher(llg_tok, grammar)
            lmask = llguidance.torch.allocate_token_bitmask(1, llg_tok.vocab_size)
            llguidance.torch.fill_next_token_bitmask(m, lmask, 0)
            ls.append((time.perf_counter() - t0) * 1e3)
            assert not m.is_error(), m.get_error()
        for impl, v in (("xgrammar", xs), ("llguidance", ls)):
            print(json.dumps({"bench": "tool_call_compile", "impl": impl, "tools": tools,
                              "compile_first_mask_ms_p50": round(statistics.median(v), 2),
                              "reps": reps}), flush=True)


if __name__ == "__main__":
    main()
