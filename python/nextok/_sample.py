"""``nextok.sample``: one draw per row, on the CPU core or, for logits in GPU
memory, on the CUDA backend.

Both paths take the same arguments and give the same tokens for the same
logits and seeds (the CUDA kernels equal the host pipeline; docs/cuda.md).
On the GPU nothing synchronises: the outputs are tensors on the logits'
device, enqueued on torch's current stream, and a row that fails (NaN
logits, nothing viable) gets token -1 and a non-zero ``status`` instead of
an exception, so one bad request does not fail the batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _nextok

DEFAULT_SEED = 0xA7A7
DEFAULT_PENALTY_WINDOW = 20


def _is_cuda_tensor(x: Any) -> bool:
    return type(x).__module__.split(".", 1)[0] == "torch" and x.device.type == "cuda"


def sample(
    logits: Any,
    mask: Any = None,
    *,
    temperature: float = 0.0,
    top_p: float = 1.0,
    top_k: int = 0,
    min_p: float = 0.0,
    seed: int | Sequence[int] | None = None,
    top_logprobs: int = 0,
    filter_order: str = "spec",
    repetition_penalty: float = 1.0,
    presence_penalty: float = 0.0,
    frequency_penalty: float = 0.0,
    logit_bias: Mapping[int, float] | None = None,
    penalty_window: int = DEFAULT_PENALTY_WINDOW,
    histories: Sequence[Sequence[int]] | None = None,
    return_distribution: bool = False,
) -> _nextok.SampleOutput:
    """Draws one token per row of float32/bfloat16 logits ``[B, V]`` (or ``[V]``).

    ``seed``: None (the default seed), an int for every row, or one int per
    row; row ``b``'s token equals ``Sampler(seed=seed[b], ...).sample(logits[b])``.
    ``mask``: int32 bitmask ``[B, ceil(V/32)]`` (on the logits' device).
    ``histories``: each row's generated tokens, for the penalties. numpy
    arrays and CPU tensors run on the C++ core (zero-copy, rows on a thread
    pool); CUDA tensors on the CUDA backend when nextok was built with it
    (``NEXTOK_CUDA=ON``), else a ``NextokError`` with code ``unsupported``.
    Returns a ``SampleOutput``.
    """
    kwargs = dict(
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        min_p=min_p,
        top_logprobs=top_logprobs,
        filter_order=filter_order,
        repetition_penalty=repetition_penalty,
        presence_penalty=presence_penalty,
        frequency_penalty=frequency_penalty,
        logit_bias=None if logit_bias is None else dict(logit_bias),
        penalty_window=penalty_window,
        histories=None if histories is None else [list(h) for h in histories],
        return_distribution=return_distribution,
    )
    if _is_cuda_tensor(logits):
        from ._cuda import sample_cuda

        return sample_cuda(logits, mask, seed=seed, **kwargs)
    return _nextok._sample_cpu(logits, mask, seed=seed, **kwargs)
