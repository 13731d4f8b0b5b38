"""TokenizerInfo: from token bytes, from files, from Hugging Face tokenizers."""

from __future__ import annotations

import nextok
import pytest
from conftest import (
    SMALL_EOS,
    SMALL_SPECIAL,
    SMALL_TOKENS,
    TOKENIZERS,
    missing_fixture,
    require_module,
)


def test_from_token_bytes_round_trip(small_info: nextok.TokenizerInfo) -> None:
    assert small_info.num_tokens == len(SMALL_TOKENS)
    assert small_info.vocab_size == len(SMALL_TOKENS) + 2
    assert small_info.bitmask_words == (small_info.vocab_size + 31) // 32
    assert small_info.eos_ids == [SMALL_EOS]
    assert small_info.special_ids == [SMALL_SPECIAL, SMALL_EOS]
    for i, b in enumerate(SMALL_TOKENS):
        assert small_info.token_bytes(i) == b
    assert small_info.token_bytes(len(SMALL_TOKENS)) == b""  # padded id
    assert small_info.token_kind(len(SMALL_TOKENS)) == "absent"
    assert small_info.token_kind(SMALL_SPECIAL) == "special"
    with pytest.raises(IndexError):
        small_info.token_bytes(small_info.vocab_size)
    with pytest.raises(IndexError):
        small_info.token_bytes(-1)


def test_bad_vocabularies_raise() -> None:
    with pytest.raises(nextok.NextokError) as e:
        nextok.TokenizerInfo.from_token_bytes([b"a", b"b"], eos_ids=[5])
    assert e.value.code == "invalid_argument"
    with pytest.raises(ValueError, match="smaller"):
        nextok.TokenizerInfo.from_token_bytes([b"a", b"b", b"c"], eos_ids=[2], vocab_size=2)
    with pytest.raises(TypeError):
        nextok.TokenizerInfo.from_token_bytes(["not bytes"], eos_ids=[0])  # type: ignore[list-item]
    with pytest.raises(nextok.NextokError) as e:
        nextok.TokenizerInfo.from_path("/nonexistent/tokenizer.json")
    assert e.value.code == "io"


def test_from_path_file_dir_and_padding(tokenizer_dirs) -> None:
    if "llama3.1" not in tokenizer_dirs:
        missing_fixture("llama3.1 tokenizer")
    d = tokenizer_dirs["llama3.1"]
    a = nextok.TokenizerInfo.from_path(d)
    b = nextok.TokenizerInfo.from_path(d / "tokenizer.json")
    assert a.num_tokens == b.num_tokens == 128256
    assert a.token_bytes(1) == b'"' and a.token_bytes(220) == b" "
    assert 128009 in a.eos_ids  # <|eot_id|> from tokenizer_config / the spec
    padded = nextok.TokenizerInfo.from_path(d, vocab_size=128300)
    assert padded.vocab_size == 128300 and padded.bitmask_words == 4010


@pytest.mark.parametrize("name", TOKENIZERS)
def test_from_huggingface_equals_the_cpp_loader(tokenizer_dirs, name: str) -> None:
    """Python's byte-level / SentencePiece decoding gives the C++ loader's bytes."""
    tokenizers = require_module("tokenizers")
    if name not in tokenizer_dirs:
        missing_fixture(f"{name} tokenizer")
    d = tokenizer_dirs[name]
    cpp = nextok.TokenizerInfo.from_path(d / "tokenizer.json")
    tok = tokenizers.Tokenizer.from_file(str(d / "tokenizer.json"))
    py = nextok.TokenizerInfo.from_huggingface(tok, eos_ids=cpp.eos_ids)
    assert py.num_tokens == cpp.num_tokens
    diff = [i for i in range(cpp.num_tokens) if py.token_bytes(i) != cpp.token_bytes(i)]
    assert diff == [], f"{len(diff)} ids differ, first {diff[:5]}: " + repr(
        [(py.token_bytes(i), cpp.token_bytes(i)) for i in diff[:5]]
    )
    assert py.special_ids == cpp.special_ids


def test_from_huggingface_needs_eos_for_a_bare_tokenizer(tokenizer_dirs) -> None:
    tokenizers = require_module("tokenizers")
    if "qwen3" not in tokenizer_dirs:
        missing_fixture("qwen3 tokenizer")
    tok = tokenizers.Tokenizer.from_file(str(tokenizer_dirs["qwen3"] / "tokenizer.json"))
    with pytest.raises(ValueError, match="eos_ids"):
        nextok.TokenizerInfo.from_huggingface(tok)
    with pytest.raises(ValueError, match="outside"):
        nextok.TokenizerInfo.from_huggingface(tok, eos_ids=[10**7])
    with pytest.raises(TypeError):
        nextok.TokenizerInfo.from_huggingface(object())
    info = nextok.TokenizerInfo.from_huggingface(tok, vocab_size=151936, eos_ids=[151645])
    assert info.vocab_size == 151936 and info.eos_ids == [151645]
