"""The CUDA side of ``nextok.sample`` and ``apply_token_bitmask_inplace``:
outputs allocated with torch on the logits' device, inputs moved there, and
the C++ entry points (python/src/py_cuda.cpp) enqueued on torch's current
stream of that device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _nextok

MAX_TOP_LOGPROBS = 20


def _rows(logits: Any) -> int:
    return 1 if logits.dim() == 1 else int(logits.shape[0])


def _seeds(seed: int | Sequence[int] | None, rows: int, default: int) -> list[int]:
    if seed is None:
        return [default] * rows
    if isinstance(seed, int):
        return [seed] * rows
    seeds = [int(s) for s in seed]
    if len(seeds) != rows:
        raise ValueError(f"seed has {len(seeds)} entries for {rows} rows")
    return seeds


def sample_cuda(
    logits: Any,
    mask: Any,
    *,
    seed: int | Sequence[int] | None,
    temperature: float,
    top_p: float,
    top_k: int,
    min_p: float,
    top_logprobs: int,
    filter_order: str,
    repetition_penalty: float,
    presence_penalty: float,
    frequency_penalty: float,
    logit_bias: dict[int, float] | None,
    penalty_window: int,
    histories: list[list[int]] | None,
    return_distribution: bool,
) -> _nextok.SampleOutput:
    import torch

    from ._sample import DEFAULT_SEED

    if top_logprobs < 0 or top_logprobs > MAX_TOP_LOGPROBS:
        raise _nextok.NextokError(f"top_logprobs must be in [0, {MAX_TOP_LOGPROBS}]")
    dev = logits.device
    rows = _rows(logits)
    vocab = int(logits.shape[-1])
    states = _nextok._pcg32_states(_seeds(seed, rows, DEFAULT_SEED))
    with torch.cuda.device(dev):
        stream = torch.cuda.current_stream(dev).cuda_stream
        rng = torch.from_numpy(states.view("int64")).to(dev, non_blocking=False)
        tokens = torch.empty(rows, dtype=torch.int32, device=dev)
        status = torch.empty(rows, dtype=torch.int32, device=dev)
        probs = torch.empty(rows, vocab, dtype=torch.float32, device=dev) if return_distribution else None
        if mask is not None:
            mask = torch.as_tensor(mask).to(dev, dtype=torch.int32)
            if mask.dim() == 1:
                mask = mask.unsqueeze(0)
            mask = mask.contiguous()
        history = history_len = None
        if histories is not None:
            if len(histories) != rows:
                raise ValueError("histories must have one list per row")
            width = max(1, max((len(h) for h in histories), default=0))
            padded = [list(h) + [0] * (width - len(h)) for h in histories]
            history = torch.tensor(padded, dtype=torch.int32).to(dev)
            history_len = torch.tensor([len(h) for h in histories], dtype=torch.int32).to(dev)
        bias_offsets = bias_ids = bias_values = None
        if logit_bias:
            ids = sorted(logit_bias)
            n = len(ids)
            bias_offsets = torch.arange(0, (rows + 1) * n, n, dtype=torch.int32).to(dev)
            bias_ids = torch.tensor(ids * rows, dtype=torch.int32).to(dev)
            bias_values = torch.tensor([logit_bias[i] for i in ids] * rows, dtype=torch.float32).to(dev)
        _nextok._cuda_sample(
            logits, mask, rng, tokens, status, probs, history, history_len, bias_offsets,
            bias_ids, bias_values, stream, temperature, top_p, top_k, min_p, filter_order,
            repetition_penalty, presence_penalty, frequency_penalty, penalty_window, logit_bias,
        )
        chosen_lp = top_ids = top_lp = None
        if top_logprobs > 0:
            ids_all = torch.empty(rows, MAX_TOP_LOGPROBS, dtype=torch.int32, device=dev)
            lp_all = torch.empty(rows, MAX_TOP_LOGPROBS, dtype=torch.float32, device=dev)
            count = torch.empty(rows, dtype=torch.int32, device=dev)
            chosen_lp = torch.empty(rows, dtype=torch.float32, device=dev)
            lp_status = torch.empty(rows, dtype=torch.int32, device=dev)
            _nextok._cuda_top_logprobs(
                logits, top_logprobs, tokens, ids_all, lp_all, count, chosen_lp, lp_status, stream
            )
            top_ids = ids_all[:, :top_logprobs]
            top_lp = lp_all[:, :top_logprobs]
    return _nextok.SampleOutput(tokens, chosen_lp, top_ids, top_lp, probs, status)


def apply_bitmask_cuda(logits: Any, bitmask: Any) -> bool:
    """Masks CUDA ``logits`` with the native kernel when the build has it and
    the layout fits (float32/bfloat16, a row of at least ceil(V/32) words);
    False when the caller must fall back to torch operations."""
    import torch

    if not _nextok._cuda_built() or logits.dtype not in (torch.float32, torch.bfloat16):
        return False
    mask = torch.as_tensor(bitmask).to(logits.device, dtype=torch.int32)
    if mask.dim() != logits.dim() or not logits.is_contiguous():
        return False
    if int(mask.shape[-1]) * 32 < int(logits.shape[-1]):
        return False
    with torch.cuda.device(logits.device):
        stream = torch.cuda.current_stream(logits.device).cuda_stream
        _nextok._cuda_apply_token_bitmask(logits, mask.contiguous(), stream)
    return True
