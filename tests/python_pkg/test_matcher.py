"""Grammar and Matcher: the bitmask against a brute-force accept_token check,
validate_tokens, rollback, fork, termination and every error path."""

from __future__ import annotations

import copy
import json
import random

import nextok
import numpy as np
import pytest
from conftest import SMALL_EOS, SMALL_SPECIAL, SMALL_TOKENS

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}},
    "required": ["a"],
    "additionalProperties": False,
}


def allowed_by_bitmask(m: nextok.Matcher) -> list[int]:
    bm = nextok.allocate_token_bitmask(1, m.vocab_size)
    bm[:] = 0x5A5A5A5A  # garbage the fill must overwrite
    m.fill_next_token_bitmask(bm)
    bits = np.unpackbits(bm.view(np.uint8), bitorder="little")
    return [t for t in range(m.vocab_size) if bits[t]] + [
        t for t in range(m.vocab_size, bits.size) if bits[t]
    ]


def allowed_by_brute_force(m: nextok.Matcher) -> list[int]:
    out = []
    for t in range(m.vocab_size):
        probe = m.fork()
        try:
            probe.accept_token(t)
        except nextok.NextokError:
            continue
        out.append(t)
    return out


def walk(info: nextok.TokenizerInfo, grammar: nextok.Grammar, seed: int, steps: int) -> None:
    """A random walk through allowed tokens, checking the mask at each step."""
    rng = random.Random(seed)
    m = nextok.Matcher(grammar)
    for _ in range(steps):
        allowed = allowed_by_bitmask(m)
        assert allowed == allowed_by_brute_force(m)
        assert allowed == m.allowed_token_ids()
        assert all(t < info.num_tokens for t in allowed)  # never a padded id
        assert SMALL_SPECIAL not in allowed
        assert (SMALL_EOS in allowed) == m.is_accepting()
        if not allowed:
            break
        t = rng.choice(allowed)
        m.accept_token(t)
        if m.is_terminated():
            assert allowed_by_bitmask(m) == [SMALL_EOS]
            break


@pytest.mark.parametrize("seed", range(6))
def test_bitmask_equals_brute_force_schema(small_info, seed: int) -> None:
    walk(small_info, nextok.Grammar.json_schema(SCHEMA, small_info, max_whitespace=1), seed, 25)


@pytest.mark.parametrize("seed", range(4))
def test_bitmask_equals_brute_force_json_object(small_info, seed: int) -> None:
    walk(small_info, nextok.Grammar.json_object(small_info, max_whitespace=2), seed, 25)


def ids(info: nextok.TokenizerInfo, *pieces: bytes) -> list[int]:
    return [SMALL_TOKENS.index(p) for p in pieces]


def test_accept_validate_rollback_fork_terminate(small_info) -> None:
    g = nextok.Grammar.json_schema(json.dumps(SCHEMA), small_info, max_whitespace=0)
    m = nextok.Matcher(g)
    doc = ids(small_info, b'{"', b"a", b'":', b"12", b"}")
    assert m.validate_tokens(doc) == len(doc) and m.num_accepted == 0
    bad = doc[:3] + ids(small_info, b"true")
    assert m.validate_tokens(bad) == 3
    assert m.validate_tokens([small_info.vocab_size + 5]) == 0
    m.accept_tokens(doc[:3])
    assert m.num_accepted == 3 and not m.is_accepting()
    f = m.fork()
    c = copy.deepcopy(m)
    m.accept_tokens(doc[3:])
    assert m.is_accepting() and not m.is_terminated()
    assert f.num_accepted == 3 and c.num_accepted == 3  # forks are independent
    assert not f.is_accepting()
    m.accept_token(SMALL_EOS)
    assert m.is_terminated() and not m.can_continue()
    with pytest.raises(nextok.NextokError, match="after EOS"):
        m.accept_token(doc[0])
    m.rollback(2)  # EOS and "}"
    assert m.num_accepted == 4 and not m.is_terminated() and not m.is_accepting()
    m.rollback()
    assert m.num_accepted == 3
    assert allowed_by_bitmask(m) == allowed_by_bitmask(f)
    m.reset()
    assert m.num_accepted == 0 and allowed_by_bitmask(m) == ids(small_info, b"{", b'{"')
    assert m.accepts_bytes(b'{"a') and not m.accepts_bytes(b"[")


def test_refused_tokens_raise_and_leave_the_state(small_info) -> None:
    m = nextok.Matcher(nextok.Grammar.json_schema(SCHEMA, small_info))
    with pytest.raises(nextok.NextokError) as e:
        m.accept_token(SMALL_TOKENS.index(b"["))
    assert e.value.code == "invalid_argument" and e.value.param == "token"
    assert isinstance(e.value, ValueError)
    assert m.num_accepted == 0
    with pytest.raises(nextok.NextokError, match="EOS before"):
        m.accept_token(SMALL_EOS)
    with pytest.raises(nextok.NextokError, match="outside"):
        m.accept_token(small_info.vocab_size)
    with pytest.raises(nextok.NextokError, match="outside"):
        m.accept_token(-1)
    with pytest.raises(nextok.NextokError):
        m.accept_token(small_info.num_tokens)  # a padded id
    with pytest.raises(nextok.NextokError, match=r"tokens\[2\]"):
        m.accept_tokens(ids(small_info, b'{"', b"a", b"["))
    assert m.num_accepted == 0  # all or nothing
    with pytest.raises(nextok.NextokError) as e:
        m.rollback(1)
    assert e.value.param == "n"
    with pytest.raises(TypeError):
        m.accept_token("7")  # type: ignore[arg-type]


def test_bitmask_argument_errors(small_info) -> None:
    m = nextok.Matcher(nextok.Grammar.json_object(small_info))
    with pytest.raises(ValueError, match="words"):
        m.fill_next_token_bitmask(np.zeros((1, 5), dtype=np.int32))
    with pytest.raises(TypeError, match="int32"):
        m.fill_next_token_bitmask(np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(IndexError):
        m.fill_next_token_bitmask(nextok.allocate_token_bitmask(2, small_info.vocab_size), 2)
    with pytest.raises(ValueError, match="dimensions"):
        m.fill_next_token_bitmask(np.zeros((1, 1, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        m.fill_next_token_bitmask(np.zeros((2, 4), dtype=np.int32)[:, ::2])
    row = np.zeros(small_info.bitmask_words, dtype=np.int32)
    m.fill_next_token_bitmask(row)  # a single 1-D row is fine
    assert row.any()
    with pytest.raises(ValueError):
        nextok.allocate_token_bitmask(0, 10)


def test_grammar_errors(small_info) -> None:
    with pytest.raises(nextok.NextokError) as e:
        nextok.Grammar.json_schema("{not json", small_info)
    assert e.value.code == "invalid_argument"
    with pytest.raises(nextok.NextokError) as e:
        nextok.Grammar.json_schema(
            {"type": "object", "unknownKeyword": 1, "properties": {"a": {"type": "strange"}}},
            small_info,
        )
    with pytest.raises(ValueError, match="max_whitespace"):
        nextok.Grammar.json_object(small_info, max_whitespace=300)
    with pytest.raises(TypeError):
        nextok.Grammar.json_object("not an info")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        nextok.Grammar.json_schema({1, 2}, small_info)  # type: ignore[arg-type]


def test_strict_and_lenient(small_info) -> None:
    schema = {"type": "string", "contentMediaType": "text/html"}
    try:
        nextok.Grammar.json_schema(schema, small_info, strict=True)
        strict_ok = True
    except nextok.NextokError as e:
        strict_ok = False
        assert e.code == "unsupported" and "contentMediaType" in str(e) + e.param
    g = nextok.Grammar.json_schema(schema, small_info, strict=False)
    assert strict_ok or g.warnings, "lenient mode lists what strict mode refused"


def test_grammar_on_a_real_vocabulary(llama_info) -> None:
    g = nextok.Grammar.json_schema(SCHEMA, llama_info)
    m = nextok.Matcher(g)
    assert g.vocab_size == llama_info.vocab_size == 128256
    allowed = m.allowed_token_ids()
    assert 90 in allowed  # "{"
    assert all(llama_info.token_bytes(t).lstrip(b" \n\t\r")[:1] in (b"{", b"") for t in allowed)
