"""Run by test_vllm.py in a child process (vLLM binds threads and memory
for the whole process): offline ``vllm.LLM`` on the CPU with the nextok
backend, enabled by the entry-point plugin; prints one JSON line per output."""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

import nextok.vllm


def main(model: str, schema_json: str, backend: str) -> None:
    from vllm.plugins import load_general_plugins

    # No enable() call: the package's vllm.general_plugins entry point makes
    # "nextok" a backend (LLM() validates its config before vLLM loads plugins).
    load_general_plugins()
    assert nextok.vllm.is_enabled(), "the nextok vLLM plugin did not run"
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    llm = LLM(
        model=model,
        dtype="float32",
        max_model_len=512,
        max_num_seqs=4,
        enforce_eager=True,
        kv_cache_memory_bytes=64 << 20,  # else a share of the machine's memory
        structured_outputs_config={"backend": backend},
        seed=0,
    )
    params = SamplingParams(
        max_tokens=400,
        temperature=1.0,
        structured_outputs=StructuredOutputsParams(json=json.loads(schema_json)),
    )
    prompts = ["Give me JSON:", "A record", "x", "hello there"]
    for out in llm.generate(prompts, params, use_tqdm=False):
        completion = out.outputs[0]
        print(
            "RESULT "
            + json.dumps({"text": completion.text, "finish_reason": completion.finish_reason}),
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
