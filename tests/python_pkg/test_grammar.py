"""Grammar.regex / .choice / .gbnf: masks against Python `re` over the small
vocabulary, GBNF through a Matcher, errors with their parameter and position."""

from __future__ import annotations

import random
import re

import nextok
import numpy as np
import pytest
from conftest import SMALL_EOS, SMALL_TOKENS


def allowed(m: nextok.Matcher) -> set[int]:
    bm = nextok.allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bm)
    bits = np.unpackbits(bm.view(np.uint8), bitorder="little")
    return {t for t in range(m.vocab_size) if bits[t]}


def viable(strings: list[bytes], prefix: bytes) -> bool:
    return any(s.startswith(prefix) for s in strings)


def test_choice_masks_are_exact(small_info) -> None:
    strings = ["true", "tree", "ab", "a", "12"]
    m = nextok.Matcher(nextok.Grammar.choice(strings, small_info))
    enc = [s.encode() for s in strings]
    rng = random.Random(1)
    for _ in range(20):
        m.reset()
        text = b""
        while True:
            got = allowed(m)
            want = {t for t, b in enumerate(SMALL_TOKENS[:-2]) if viable(enc, text + b)}
            if text in enc:
                want.add(SMALL_EOS)
            assert got == want, text
            options = sorted(got - {SMALL_EOS})
            if not options:
                break
            t = rng.choice(options)
            m.accept_token(t)
            text += SMALL_TOKENS[t]


def test_regex_outputs_fullmatch_python_re(small_info) -> None:
    pattern = r"(ab|a)+(12|7)?"
    m = nextok.Matcher(nextok.Grammar.regex(pattern, small_info))
    rng = random.Random(2)
    for _ in range(30):
        m.reset()
        text = b""
        for _ in range(12):
            got = allowed(m)
            assert (SMALL_EOS in got) == bool(re.fullmatch(pattern, text.decode("latin-1")))
            options = sorted(got - {SMALL_EOS})
            if not options or (SMALL_EOS in got and rng.random() < 0.3):
                break
            t = rng.choice(options)
            m.accept_token(t)
            text += SMALL_TOKENS[t]
        if m.is_accepting():
            assert re.fullmatch(pattern, text.decode("latin-1")), text


def test_gbnf_matcher_rollback_and_fork(small_info) -> None:
    g = nextok.Grammar.gbnf('root ::= "[" (item ("," item)*)? "]"\nitem ::= [0-9]+ | "true"\n', small_info)
    assert g.warnings == []
    m = nextok.Matcher(g)
    ids = {b: i for i, b in enumerate(SMALL_TOKENS)}
    for b in (b"[", b"12", b",", b"true", b"]"):
        m.accept_token(ids[b])
    assert m.is_accepting()
    fork = m.fork()
    m.rollback(1)
    assert not m.is_accepting() and ids[b","] in allowed(m)
    fork.accept_token(SMALL_EOS)
    assert fork.is_terminated()
    with pytest.raises(nextok.NextokError):
        m.accept_token(ids[b"a"])
    assert m.num_accepted == 4


def test_grammar_errors_are_clear(small_info) -> None:
    with pytest.raises(nextok.NextokError, match=r"2:11: undefined rule 'nope'"):
        nextok.Grammar.gbnf('root ::= x\nx ::= "a" nope\n', small_info)
    with pytest.raises(nextok.NextokError, match="language is empty"):
        nextok.Grammar.gbnf('root ::= "a" root\n', small_info)
    with pytest.raises(nextok.NextokError) as e:
        nextok.Grammar.regex("a(?=b)", small_info)
    assert e.value.param == "pattern"
    with pytest.raises(nextok.NextokError):
        nextok.Grammar.choice([], small_info)
