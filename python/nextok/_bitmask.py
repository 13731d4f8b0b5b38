"""Token bitmask helpers: allocation and applying a bitmask to logits.

The layout is XGrammar's and llguidance's: int32 words, ceil(V / 32) per
row; bit ``t % 32`` of word ``t // 32`` set means token ``t`` is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _nextok


def bitmask_words(vocab_size: int) -> int:
    """int32 words in one bitmask row: ``ceil(vocab_size / 32)``."""
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A ``[batch_size, ceil(vocab_size / 32)]`` int32 bitmask with every token allowed.

    Pass it to ``Matcher.fill_next_token_bitmask`` or
    ``fill_next_token_bitmasks``; ``torch.from_numpy`` shares its memory.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    return np.full((batch_size, bitmask_words(vocab_size)), -1, dtype=np.int32)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch"


def _apply_with_torch(logits: Any, bitmask: Any, indices: Sequence[int] | None) -> None:
    """Any torch device and floating dtype: unpack the bits with torch ops."""
    import torch

    mask = bitmask if _is_torch(bitmask) else torch.from_numpy(np.asarray(bitmask))
    mask = mask.to(device=logits.device, dtype=torch.int32)
    rows = logits.unsqueeze(0) if logits.dim() == 1 else logits
    if mask.dim() == 1:
        mask = mask.unsqueeze(0)
    vocab = rows.shape[-1]
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    allowed = ((mask.unsqueeze(-1) >> shifts) & 1).bool().reshape(mask.shape[0], -1)
    if allowed.shape[1] < vocab:  # tokens past the bitmask are not allowed
        pad = torch.zeros(
            (allowed.shape[0], vocab - allowed.shape[1]), dtype=torch.bool, device=logits.device
        )
        allowed = torch.cat([allowed, pad], dim=1)
    allowed = allowed[:, :vocab]
    if indices is None:
        if allowed.shape[0] != rows.shape[0]:
            raise ValueError(f"logits has {rows.shape[0]} rows, bitmask {allowed.shape[0]}")
        rows.masked_fill_(~allowed, float("-inf"))
    else:
        idx = torch.as_tensor(list(indices), device=logits.device, dtype=torch.long)
        rows[idx] = rows[idx].masked_fill(~allowed[idx], float("-inf"))


def apply_token_bitmask_inplace(
    logits: Any, bitmask: Any, indices: Sequence[int] | None = None
) -> None:
    """Sets every logit whose bitmask bit is clear to -inf, in place.

    ``logits``: ``[B, V]`` or ``[V]``; a numpy array or a torch tensor.
    CPU float32 / bfloat16 arrays are masked by the C++ core without a copy;
    other torch devices and dtypes use torch operations on the tensor's own
    device. ``bitmask``: int32 ``[B, W]`` (or ``[W]``). Tokens past the
    bitmask's ``32 * W`` are masked. ``indices``: only these rows (logits
    row ``i`` with bitmask row ``i``).
    """
    if _is_torch(logits):
        import torch

        if logits.device.type == "cuda" and indices is None:
            from ._cuda import apply_bitmask_cuda

            if apply_bitmask_cuda(logits, bitmask):
                return
        native = logits.device.type == "cpu" and logits.dtype in (torch.float32, torch.bfloat16)
        if native and (not _is_torch(bitmask) or bitmask.device.type == "cpu"):
            _nextok._apply_token_bitmask_inplace(logits, bitmask, indices)
        else:
            _apply_with_torch(logits, bitmask, indices)
        return
    if not isinstance(logits, np.ndarray):
        raise TypeError(f"logits must be a numpy array or a torch tensor, got {type(logits)!r}")
    if _is_torch(bitmask):
        bitmask = bitmask.cpu().numpy()
    _nextok._apply_token_bitmask_inplace(logits, bitmask, indices)
