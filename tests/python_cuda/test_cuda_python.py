"""nextok.sample and apply_token_bitmask_inplace on CUDA tensors (a build
with NEXTOK_CUDA=ON, on a GPU machine: docs/cuda.md): the same tokens,
logprobs and distributions as the CPU core on the same logits and seeds,
per-row failures as statuses, and clear errors for bad arrays."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import nextok

if not torch.cuda.is_available():  # this suite is the GPU machine's; CI has no GPU
    pytest.fail("no CUDA device: run tests/python_cuda on a GPU machine", pytrace=False)

CONFIGS = [
    dict(),
    dict(temperature=1.0, top_k=50, top_p=0.9),
    dict(temperature=0.7, top_k=40, top_p=0.95, filter_order="top_k_first"),
    dict(temperature=1.2, min_p=0.05),
    dict(temperature=1.0, top_k=20, repetition_penalty=1.3, presence_penalty=0.5,
         frequency_penalty=0.2, logit_bias={3: 4.0, 7: float("-inf")}),
    dict(temperature=0.0, repetition_penalty=1.2, top_logprobs=5),
    dict(temperature=1.0, top_p=0.0, top_k=0, top_logprobs=20),  # top_p 0 = off
]


def _logits(rows: int, vocab: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, vocab, generator=g) * 3.0
    return x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rows,vocab", [(1, 151936), (8, 1000), (64, 32000)])
@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_cuda_sample_equals_cpu(dtype: torch.dtype, rows: int, vocab: int, cfg: int) -> None:
    kw = dict(CONFIGS[cfg])
    x = _logits(rows, vocab, dtype, seed=rows * 7 + cfg)
    seeds = [1000 + r for r in range(rows)]
    histories = [[(r * 13 + j) % vocab for j in range(r % 9)] for r in range(rows)]
    words = (vocab + 31) // 32
    mask = torch.from_numpy(np.random.default_rng(cfg).integers(-(2**31), 2**31, (rows, words),
                                                                dtype=np.int64).astype(np.int32))
    use_mask = cfg % 2 == 1
    cpu = nextok.sample(x, mask if use_mask else None, seed=seeds, histories=histories,
                        return_distribution=True, **kw)
    gpu = nextok.sample(x.cuda(), mask.cuda() if use_mask else None, seed=seeds,
                        histories=histories, return_distribution=True, **kw)
    torch.cuda.synchronize()
    assert gpu.tokens.device.type == "cuda"
    assert (gpu.status.cpu() == 0).all()
    assert np.array_equal(gpu.tokens.cpu().numpy(), cpu.tokens)
    dist = gpu.distribution.cpu().numpy()
    assert np.abs(dist - cpu.distribution).max() <= 1e-5
    k = kw.get("top_logprobs", 0)
    if k:
        assert np.array_equal(gpu.top_ids.cpu().numpy(), cpu.top_ids)
        assert np.abs(gpu.top_logprobs.cpu().numpy() - cpu.top_logprobs).max() <= 1e-5
        assert np.abs(gpu.logprobs.cpu().numpy() - cpu.logprobs).max() <= 1e-5


def test_failed_rows_are_statuses_not_exceptions() -> None:
    x = _logits(4, 5000, torch.float32, seed=1)
    x[1, 17] = float("nan")
    x[2, :] = float("-inf")
    out = nextok.sample(x.cuda(), temperature=1.0, top_k=10, seed=[1, 2, 3, 4])
    tokens = out.tokens.cpu().tolist()
    status = out.status.cpu().tolist()
    assert status == [0, 1, 2, 0]
    assert tokens[1] == -1 and tokens[2] == -1
    cpu = nextok.sample(x[[0, 3]], temperature=1.0, top_k=10, seed=[1, 4])
    assert [tokens[0], tokens[3]] == cpu.tokens.tolist()
    with pytest.raises(nextok.NextokError):  # the CPU core raises for the same row
        nextok.sample(x[1], temperature=1.0, top_k=10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_apply_token_bitmask_on_cuda(dtype: torch.dtype) -> None:
    x = _logits(6, 151936, dtype, seed=3)
    words = (151936 + 31) // 32
    mask = torch.randint(-(2**31), 2**31, (6, words), dtype=torch.int64).to(torch.int32)
    want = x.clone()
    nextok.apply_token_bitmask_inplace(want, mask)
    got = x.cuda()
    nextok.apply_token_bitmask_inplace(got, mask.cuda())
    assert torch.equal(got.cpu(), want)


def test_bad_cuda_arrays_raise() -> None:
    x = _logits(2, 1000, torch.float32, seed=4).cuda()
    with pytest.raises(TypeError, match="float32 or bfloat16"):
        nextok.sample(x.half())
    with pytest.raises(ValueError, match="C-contiguous"):
        nextok.sample(x.t())
    with pytest.raises(ValueError, match="mask"):
        nextok.sample(x, torch.zeros(2, 5, dtype=torch.int32, device="cuda"))
    with pytest.raises(nextok.NextokError, match="top_p"):
        nextok.sample(x, temperature=1.0, top_p=float("nan"))
    with pytest.raises(nextok.NextokError):
        nextok.sample(x, top_logprobs=21)
    with pytest.raises(ValueError, match="seed"):
        nextok.sample(x, seed=[1, 2, 3])
