// Batched argmax / masked argmax. Each row is split over `splits` blocks so a
// single row still spreads over many SMs; the last block of a row to finish
// folds the partials (no second launch).
#pragma once

#include <cub/block/block_reduce.cuh>

#include "backend/cuda/device_math.cuh"

namespace nextok::cuda::dev {

struct ArgmaxPartial {
  float value;
  std::int32_t index;
  std::int32_t nan;
};

constexpr int kArgmaxThreads = 512;
constexpr int kArgmaxUnroll = 8;

template <typename T>
__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_kernel(const T* __restrict__ logits, std::int64_t vocab,
                  const std::uint32_t* __restrict__ mask, int splits,
                  ArgmaxPartial* __restrict__ partials, unsigned* __restrict__ counters,
                  std::int32_t* __restrict__ tokens, std::int32_t* __restrict__ status) {
  using Reduce = cub::BlockReduce<ArgMax, kArgmaxThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ int any_nan;
  __shared__ bool last;
  const int row = blockIdx.y;
  const int split = blockIdx.x;
  const T* x = logits + static_cast<std::int64_t>(row) * vocab;
  const std::uint32_t* m = mask == nullptr ? nullptr : mask + row * ((vocab + 31) / 32);
  const std::int64_t chunk = (vocab + splits - 1) / splits;
  const std::int64_t begin = split * chunk;
  const std::int64_t end = min(vocab, begin + chunk);
  if (threadIdx.x == 0) any_nan = 0;
  __syncthreads();

  ArgMax acc{kNegInf, INT32_MAX};
  bool nan = false;
  constexpr std::int64_t kStep = kArgmaxThreads * kArgmaxUnroll;
  for (std::int64_t base = begin; base < end; base += kStep) {
    float v[kArgmaxUnroll];
#pragma unroll
    for (int u = 0; u < kArgmaxUnroll; ++u) {
      const std::int64_t i = base + u * kArgmaxThreads + threadIdx.x;
      v[u] = i < end ? load_elem(x, i) : kNegInf;
    }
    if (m == nullptr) {
#pragma unroll
      for (int u = 0; u < kArgmaxUnroll; ++u) {
        const std::int64_t i = base + u * kArgmaxThreads + threadIdx.x;
        nan |= v[u] != v[u];
        if (v[u] > kNegInf) acc = better(acc, {v[u], static_cast<std::int32_t>(i)});
      }
      continue;
    }
    // Masked: the mask words are requested together; a thread's ids ascend,
    // so a strict > keeps the lowest id of the max (better()'s tie rule) and
    // skips -inf, NaN and masked ids with selects, no branch.
    std::uint32_t w[kArgmaxUnroll];
#pragma unroll
    for (int u = 0; u < kArgmaxUnroll; ++u) {
      const std::int64_t i = base + u * kArgmaxThreads + threadIdx.x;
      w[u] = i < end ? __ldg(m + (i >> 5)) : 0U;
    }
#pragma unroll
    for (int u = 0; u < kArgmaxUnroll; ++u) {
      const std::int64_t i = base + u * kArgmaxThreads + threadIdx.x;
      nan |= v[u] != v[u];
      const bool up = v[u] > acc.value && ((w[u] >> (i & 31)) & 1U) != 0U;
      acc.value = up ? v[u] : acc.value;
      acc.index = up ? static_cast<std::int32_t>(i) : acc.index;
    }
  }
  if (nan) any_nan = 1;
  const ArgMax best = Reduce(tmp).Reduce(acc, ArgMaxOp{});
  __syncthreads();
  if (threadIdx.x == 0) {
    partials[row * splits + split] = {best.value, best.index, any_nan};
    __threadfence();
    last = atomicAdd(&counters[row], 1U) == static_cast<unsigned>(splits - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  ArgMax fold{kNegInf, INT32_MAX};
  int fold_nan = 0;
  for (int s = threadIdx.x; s < splits; s += kArgmaxThreads) {
    const volatile ArgmaxPartial* p = &partials[row * splits + s];
    const float pv = p->value;
    const std::int32_t pi = p->index;
    fold_nan |= p->nan;
    if (pi != INT32_MAX) fold = better(fold, {pv, pi});
  }
  if (fold_nan) any_nan = 1;
  const ArgMax total = Reduce(tmp).Reduce(fold, ArgMaxOp{});
  __syncthreads();
  if (threadIdx.x == 0) {
    counters[row] = 0;  // ready for the next launch (and graph replay)
    std::int32_t st = 0, tok = -1;
    if (any_nan) {
      st = 1;
    } else if (total.index == INT32_MAX) {
      st = 2;
    } else {
      tok = total.index;
    }
    tokens[row] = tok;
    if (status != nullptr) status[row] = st;
  }
}

}  // namespace nextok::cuda::dev
