"""fill_next_token_bitmasks: equal to per-matcher fills, indices, threads,
errors, and the GIL released while it runs."""

from __future__ import annotations

import bisect
import sys
import threading
import time

import nextok
import numpy as np
import pytest

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}},
    },
    "required": ["name", "age"],
}
PREFIXES = [
    b"",
    b"{",
    b'{"na',
    b'{"name": "Jo',
    b'{"name": "x", "age": 4',
    b'{"name": "x", "age": 1, "tags": [',
]


def matchers_at_prefixes(info: nextok.TokenizerInfo, grammar: nextok.Grammar, n: int):
    """n matchers at assorted states, reached by greedy byte-exact tokens."""
    by_bytes = {info.token_bytes(t): t for t in range(info.num_tokens) if info.token_bytes(t)}
    out = []
    for i in range(n):
        m = nextok.Matcher(grammar)
        prefix = PREFIXES[i % len(PREFIXES)]
        pos = 0
        while pos < len(prefix):  # longest token matching the prefix
            for end in range(len(prefix), pos, -1):
                t = by_bytes.get(prefix[pos:end])
                if t is not None and m.validate_tokens([t]) == 1:
                    m.accept_token(t)
                    pos = end
                    break
            else:
                raise AssertionError(f"cannot spell {prefix!r}")
        out.append(m)
    return out


@pytest.fixture(scope="module")
def grammar(llama_info):
    return nextok.Grammar.json_schema(SCHEMA, llama_info)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_batch_fill_equals_per_matcher_fill(llama_info, grammar, threads: int) -> None:
    ms = matchers_at_prefixes(llama_info, grammar, 12)
    one = nextok.allocate_token_bitmask(len(ms), llama_info.vocab_size)
    for i, m in enumerate(ms):
        m.fill_next_token_bitmask(one, i)
    batch = nextok.allocate_token_bitmask(len(ms), llama_info.vocab_size)
    batch[:] = 0x1234
    nextok.fill_next_token_bitmasks(ms, batch, threads=threads)
    assert np.array_equal(one, batch)
    assert len({one[i].tobytes() for i in range(len(PREFIXES))}) == len(PREFIXES)


def test_batch_fill_with_indices(llama_info, grammar) -> None:
    ms = matchers_at_prefixes(llama_info, grammar, 3)
    bm = nextok.allocate_token_bitmask(5, llama_info.vocab_size)
    nextok.fill_next_token_bitmasks(ms, bm, indices=[4, 0, 2])
    for m, row in zip(ms, [4, 0, 2]):
        ref = nextok.allocate_token_bitmask(1, llama_info.vocab_size)
        m.fill_next_token_bitmask(ref)
        assert np.array_equal(bm[row], ref[0])
    assert (bm[1] == -1).all() and (bm[3] == -1).all()  # untouched


def test_batch_fill_errors(llama_info, grammar, small_info) -> None:
    ms = matchers_at_prefixes(llama_info, grammar, 2)
    bm = nextok.allocate_token_bitmask(2, llama_info.vocab_size)
    with pytest.raises(ValueError, match="twice"):
        nextok.fill_next_token_bitmasks([ms[0], ms[0]], bm)
    with pytest.raises(ValueError, match="distinct"):
        nextok.fill_next_token_bitmasks(ms, bm, indices=[1, 1])
    with pytest.raises(IndexError):
        nextok.fill_next_token_bitmasks(ms, bm, indices=[0, 2])
    with pytest.raises(ValueError, match="entries"):
        nextok.fill_next_token_bitmasks(ms, bm, indices=[0])
    with pytest.raises(ValueError, match="rows"):
        nextok.fill_next_token_bitmasks(ms, bm[:1])
    with pytest.raises(ValueError, match="threads"):
        nextok.fill_next_token_bitmasks(ms, bm, threads=0)
    other = nextok.Matcher(nextok.Grammar.json_object(small_info))
    with pytest.raises(ValueError, match="words"):
        nextok.fill_next_token_bitmasks([ms[0], other], bm)
    with pytest.raises(TypeError):
        nextok.fill_next_token_bitmasks([ms[0], "x"], bm)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        nextok.fill_next_token_bitmasks(ms, bm.astype(np.float32))


def stamps_inside_calls(call) -> tuple[int, float]:
    """Runs call() in a thread until 0.1 s were spent in it, while the main
    thread records timestamps; returns (stamps strictly inside a call, s).

    A long switch interval keeps the interpreter from taking the GIL from
    the worker between its t0 and t1 (it runs Python for microseconds
    there), so a main-thread stamp inside a call proves the call let go of
    the GIL. sleep(0) hands the GIL over whenever main holds it."""
    spans: list[tuple[float, float]] = []

    def work() -> None:
        spent = 0.0
        while spent < 0.1 and len(spans) < 100000:
            t0 = time.perf_counter()
            call()
            t1 = time.perf_counter()
            spans.append((t0, t1))
            spent += t1 - t0

    stamps: list[float] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        while t.is_alive():
            stamps.append(time.perf_counter())
            time.sleep(0)
        t.join()
    finally:
        sys.setswitchinterval(old)
    inside = sum(bisect.bisect_left(stamps, b) - bisect.bisect_right(stamps, a) for a, b in spans)
    return inside, sum(b - a for a, b in spans)


def test_the_gil_is_released_during_a_batch_fill(llama_info) -> None:
    g = nextok.Grammar.json_object(llama_info)
    ms = matchers_at_prefixes(llama_info, nextok.Grammar.json_schema(SCHEMA, llama_info), 6)
    base = [nextok.Matcher(g)] + ms
    batch = [base[i % len(base)].fork() for i in range(400)]
    bm = nextok.allocate_token_bitmask(len(batch), llama_info.vocab_size)
    inside, total = stamps_inside_calls(
        lambda: nextok.fill_next_token_bitmasks(batch, bm, threads=1)
    )
    assert total >= 0.1
    assert inside > 100, f"{inside} main-thread steps during {total:.3f} s of fills"
    # The control: allowed_token_ids() keeps the GIL, and the harness sees it.
    m = base[1]
    held, total = stamps_inside_calls(m.allowed_token_ids)
    assert total >= 0.1 and held == 0, f"{held} stamps inside GIL-holding calls"
