"""apply_token_bitmask_inplace on numpy arrays and torch tensors."""

from __future__ import annotations

import nextok
import numpy as np
import pytest
from conftest import require_module


def reference(logits: np.ndarray, bitmask: np.ndarray) -> np.ndarray:
    bits = np.unpackbits(bitmask.astype(np.int32).view(np.uint8), bitorder="little")
    bits = bits.reshape(bitmask.shape[0], -1)
    out = logits.copy()
    v = logits.shape[1]
    allowed = np.zeros((logits.shape[0], v), dtype=bool)
    n = min(v, bits.shape[1])
    allowed[:, :n] = bits[:, :n].astype(bool)
    out[~allowed] = -np.inf
    return out


@pytest.mark.parametrize("vocab", [1, 31, 32, 33, 100, 1000])
def test_numpy_float32_matches_reference(vocab: int) -> None:
    rng = np.random.default_rng(vocab)
    logits = rng.standard_normal((3, vocab), dtype=np.float32)
    bm = rng.integers(-(2**31), 2**31, size=(3, (vocab + 31) // 32), dtype=np.int64).astype(
        np.int32
    )
    want = reference(logits, bm)
    nextok.apply_token_bitmask_inplace(logits, bm)
    assert np.array_equal(logits, want)


def test_indices_one_row_and_narrow_bitmask() -> None:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 64), dtype=np.float32)
    orig = logits.copy()
    bm = np.zeros((3, 2), dtype=np.int32)
    nextok.apply_token_bitmask_inplace(logits, bm, indices=[1])
    assert np.array_equal(logits[0], orig[0]) and np.isneginf(logits[1]).all()
    row = rng.standard_normal(70, dtype=np.float32)
    nextok.apply_token_bitmask_inplace(row, np.array([-1, -1], dtype=np.int32))
    assert np.isfinite(row[:64]).all() and np.isneginf(row[64:]).all()  # past the bitmask


def test_numpy_errors() -> None:
    bm = nextok.allocate_token_bitmask(2, 64)
    with pytest.raises(TypeError, match="float32"):
        nextok.apply_token_bitmask_inplace(np.zeros((2, 64)), bm)
    with pytest.raises(TypeError, match="int32"):
        nextok.apply_token_bitmask_inplace(np.zeros((2, 64), np.float32), bm.astype(np.int16))
    with pytest.raises(ValueError, match="rows"):
        nextok.apply_token_bitmask_inplace(np.zeros((3, 64), np.float32), bm)
    with pytest.raises(ValueError, match="contiguous"):
        nextok.apply_token_bitmask_inplace(np.zeros((2, 128), np.float32)[:, ::2], bm)
    with pytest.raises(ValueError, match="dimensions"):
        nextok.apply_token_bitmask_inplace(np.zeros((2, 2, 64), np.float32), bm)
    with pytest.raises(TypeError):
        nextok.apply_token_bitmask_inplace([[0.0] * 64] * 2, bm)


def test_torch_cpu_float32_bf16_float16() -> None:
    torch = require_module("torch")
    rng = np.random.default_rng(1)
    base = rng.standard_normal((2, 100), dtype=np.float32)
    bm = rng.integers(-(2**31), 2**31, size=(2, 4), dtype=np.int64).astype(np.int32)
    want = reference(base, bm)
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        t = torch.from_numpy(base.copy()).to(dtype)
        ptr = t.data_ptr()
        nextok.apply_token_bitmask_inplace(t, torch.from_numpy(bm))
        assert t.data_ptr() == ptr
        assert np.array_equal(np.isneginf(t.float().numpy()), np.isneginf(want)), dtype
    t = torch.from_numpy(base.copy())
    nextok.apply_token_bitmask_inplace(t, bm, indices=[1])
    assert np.array_equal(t[0].numpy(), base[0])
    assert np.array_equal(np.isneginf(t[1].numpy()), np.isneginf(want[1]))
