// Batched argmax / masked argmax. Each row is split over `splits` blocks so a
// single row still spreads over many SMs; the last block of a row to finish
// folds the partials (no second launch). Rows are read in 16-byte groups
// where the layout allows (row_groups.cuh).
#pragma once

#include <cub/block/block_reduce.cuh>

#include "backend/cuda/row_groups.cuh"

namespace nextok::cuda::dev {

struct ArgmaxPartial {
  float value;
  std::int32_t index;
  std::int32_t nan;
};

constexpr int kArgmaxThreads = 512;
constexpr int kArgmaxGroups = 2;  // groups in flight per thread

template <typename T, int W>
__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_kernel(const T* __restrict__ logits, std::int64_t vocab, std::int64_t chunk,
                  const std::uint32_t* __restrict__ mask, int splits,
                  ArgmaxPartial* __restrict__ partials, unsigned* __restrict__ counters,
                  std::int32_t* __restrict__ tokens, std::int32_t* __restrict__ status) {
  using Reduce = cub::BlockReduce<ArgMax, kArgmaxThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ bool last;
  const int row = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(blockIdx.x);
  const T* x = logits + static_cast<std::int64_t>(row) * vocab;
  const std::uint32_t* m = mask == nullptr ? nullptr : mask + row * ((vocab + 31) / 32);
  const std::int64_t begin = split * chunk;
  const std::int64_t end = min(vocab, begin + chunk);

  // A thread's ids ascend, so a strict > keeps the lowest id of the max
  // (better()'s tie rule) and skips -inf, NaN and masked ids with selects.
  ArgMax acc{kNegInf, INT32_MAX};
  bool nan = false;
  for_each_group<T, W, kArgmaxGroups, kArgmaxThreads>(
      x, begin, end, [&](const float(&v)[W], std::int64_t i0) {
        // W divides 32: a group's ids share one mask word.
        const std::uint32_t w = m == nullptr ? ~0U : (i0 < end ? __ldg(m + (i0 >> 5)) : 0U);
#pragma unroll
        for (int j = 0; j < W; ++j) {
          nan |= v[j] != v[j];
          const bool up = v[j] > acc.value && ((w >> ((i0 + j) & 31)) & 1U) != 0U;
          acc.value = up ? v[j] : acc.value;
          acc.index = up ? static_cast<std::int32_t>(i0 + j) : acc.index;
        }
      });
  const int any_nan = __syncthreads_or(nan ? 1 : 0);
  const ArgMax best = Reduce(tmp).Reduce(acc, ArgMaxOp{});
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
  for (int s = static_cast<int>(threadIdx.x); s < splits; s += kArgmaxThreads) {
    const volatile ArgmaxPartial* p = &partials[row * splits + s];
    const float pv = p->value;
    const std::int32_t pi = p->index;
    fold_nan |= p->nan;
    if (pi != INT32_MAX) fold = better(fold, {pv, pi});
  }
  const int total_nan = __syncthreads_or(fold_nan);
  const ArgMax total = Reduce(tmp).Reduce(fold, ArgMaxOp{});
  if (threadIdx.x == 0) {
    counters[row] = 0;  // ready for the next launch (and graph replay)
    std::int32_t st = 0, tok = -1;
    if (total_nan != 0) {
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
