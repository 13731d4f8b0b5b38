"""Grammar.regex / .choice / .gbnf / .lark: masks against Python `re` over the
small vocabulary, GBNF and Lark through a Matcher, errors with their parameter
and position."""

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


def check_finite_language(
    m: nextok.Matcher, sentences: list[bytes], seed: int, walks: int = 20
) -> None:
    """Random walks; every mask must allow exactly the tokens that keep the
    text a prefix of one of the sentences, and EOS exactly on a sentence (a
    prefix no token can extend, like "1" of "12" here, ends the walk)."""
    rng = random.Random(seed)
    for _ in range(walks):
        m.reset()
        text = b""
        while True:
            got = allowed(m)
            want = {t for t, b in enumerate(SMALL_TOKENS[:-2]) if viable(sentences, text + b)}
            if text in sentences:
                want.add(SMALL_EOS)
            assert got == want, text
            options = sorted(got - {SMALL_EOS})
            if not options:
                break
            t = rng.choice(options)
            m.accept_token(t)
            text += SMALL_TOKENS[t]


def test_choice_masks_are_exact(small_info) -> None:
    strings = ["true", "tree", "ab", "a", "12"]
    m = nextok.Matcher(nextok.Grammar.choice(strings, small_info))
    check_finite_language(m, [s.encode() for s in strings], seed=1)


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
    g = nextok.Grammar.gbnf(
        'root ::= "[" (item ("," item)*)? "]"\nitem ::= [0-9]+ | "true"\n', small_info
    )
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


def test_lark_masks_are_exact(small_info) -> None:
    # A finite language, so that every sentence can be listed.
    g = nextok.Grammar.lark(
        'start: "[" item ("," item)? "]"\n?item: NUM | "true"\nNUM: "0".."1" "7"?\n', small_info
    )
    items = ["0", "1", "07", "17", "true"]
    sentences = [f"[{a}]".encode() for a in items] + [
        f"[{a},{b}]".encode() for a in items for b in items
    ]
    check_finite_language(nextok.Matcher(g), sentences, seed=4)


def test_grammar_text_is_told_apart(small_info) -> None:
    from nextok._grammar_text import compile_grammar_text, is_gbnf

    assert is_gbnf('root ::= "a"\n')
    assert is_gbnf('# c\n  my-rule ::= "x"\nroot ::= my-rule')
    assert not is_gbnf('start: "a" // "::=" in a comment is not a rule\n')
    ids = {b: i for i, b in enumerate(SMALL_TOKENS)}
    for text in ('root ::= "ab" | "1"\n', 'start: "ab" | "1"\n'):
        m = nextok.Matcher(compile_grammar_text(text, small_info))
        assert allowed(m) & {ids[b"a"], ids[b"1"]} == {ids[b"a"], ids[b"1"]}


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
    with pytest.raises(nextok.NextokError, match=r"2:8: undefined rule 'nope'") as e:
        nextok.Grammar.lark('start: x\nx: "a" nope\n', small_info)
    assert e.value.param == "grammar"
    with pytest.raises(nextok.NextokError, match="the template '_sep' takes 2 arguments"):
        nextok.Grammar.lark('_sep{x, s}: x (s x)*\nstart: _sep{"a"}\n', small_info)
