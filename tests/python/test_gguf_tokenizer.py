"""The GGUF tokenizer path against HF `tokenizers`: the reference is an HF BPE
built from the GGUF file's own tokens and merges with the pre-tokenizer its
tokenizer.ggml.pre names (SmolLM2: "smollm" = individual digits, then the
GPT-2 byte-level split), so vocabulary, merges and pre-tokenizer are all
checked on the real default model file."""
import json
import os
import random

import pytest

from conftest import run_cli, missing_fixture

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")


def _gguf_path():
    path = os.environ.get("NEXTOK_SMOLLM2_GGUF")
    if not path or not os.path.exists(path):
        missing_fixture("NEXTOK_SMOLLM2_GGUF does not name the SmolLM2 .gguf (scripts/fetch_smollm2.sh)")
    return path


def _field(reader, key):
    f = reader.fields[key]
    if len(f.types) == 1 and f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(f.parts[-1]).decode("utf-8")
    if f.types[0] == gguf.GGUFValueType.ARRAY:
        if f.types[1] == gguf.GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [int(f.parts[i][0]) for i in f.data]
    return int(f.parts[-1][0])


@pytest.fixture(scope="module")
def reference():
    path = _gguf_path()
    r = gguf.GGUFReader(path)
    assert _field(r, "tokenizer.ggml.model") == "gpt2"
    assert _field(r, "tokenizer.ggml.pre") == "smollm"
    tokens = _field(r, "tokenizer.ggml.tokens")
    types = _field(r, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ")) for m in _field(r, "tokenizer.ggml.merges")]
    vocab = {t: i for i, t in enumerate(tokens)}
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.add_tokens([AddedToken(tokens[i], special=(types[i] == 3), normalized=False)
                    for i in range(len(tokens)) if types[i] in (3, 4)])
    return path, tok, tokens, types


def _corpus():
    rng = random.Random(5)
    base = [
        "Hello world! It's 2024, naïve café 😀",
        "<|im_start|>user\nWhat is 12345 + 678?<|im_end|>\n<|im_start|>assistant\n",
        "def f(x):\n    return x**2  # square\n\n\n",
        "Ünïcödé ñ 東京 مرحبا 👨‍👩‍👧 3.14159 1e-9 0x1F",
        "   many    spaces\t\ttabs\r\nwindows\n",
        "I'M HERE, you're there; they'd've gone.",
        "{\"a\": [1, 2, {\"b\": null}], \"c\": \"<file_sep>\"}",
        "",
    ]
    alphabet = "ab cd\n\t1234567890'<>|_.,!?éü東😀 "
    for _ in range(300):
        base.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))))
    return base


def test_gguf_vocabulary_bytes_match(cli, reference):
    path, _, tokens, types = reference
    byte_decoder = {}
    n = 0
    for b in range(256):
        if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE:
            byte_decoder[chr(b)] = b
        else:
            byte_decoder[chr(256 + n)] = b
            n += 1
    out = run_cli(cli, "vocab", "--tokenizer", path, "--dump").stdout.splitlines()
    assert len(out) == len(tokens)
    for line in out:
        row = json.loads(line)
        t = tokens[row["id"]]
        if all(c in byte_decoder for c in t):
            want = bytes(byte_decoder[c] for c in t)
        else:
            want = t.encode("utf-8")
        assert bytes.fromhex(row["hex"]) == want, (row, t)
        if types[row["id"]] == 3:
            assert row["kind"] == "special", row


def test_gguf_encode_matches_hf(cli, reference, tmp_path):
    path, tok, _, _ = reference
    docs = _corpus()
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    out = run_cli(cli, "tokenize", "--tokenizer", path, "--input-jsonl", src, "--json").stdout
    got = [json.loads(line)["ids"] for line in out.splitlines()]
    want = [tok.encode(d, add_special_tokens=False).ids for d in docs]
    assert len(got) == len(want)
    for d, g, w in zip(docs, got, want):
        assert g == w, f"{d!r}: nextok {g} HF {w}"


def test_gguf_eos_and_chat_template(cli, reference):
    path, _, _, _ = reference
    summary = json.loads(run_cli(cli, "vocab", "--tokenizer", path).stdout)
    assert summary["eos_ids"] == [2] and summary["bos_id"] == 1 and summary["size"] == 49152
    prompt = run_cli(cli, "chat-format", "--tokenizer", path, "--messages-json",
                     '[{"role": "user", "content": "Hi"}]').stdout
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
