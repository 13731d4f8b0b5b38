// Streaming a part of one row in groups of W consecutive ids: 16-byte
// loads (W = 4 f32 or 8 bf16) when the row is aligned and V a multiple of
// W, single elements (W = 1) otherwise. U groups per thread are requested
// before any is used, so each thread keeps several loads in flight (the
// single-row kernels are latency-bound without it).
#pragma once

#include <cstdint>

#include "backend/cuda/device_math.cuh"

namespace nextok::cuda::dev {

template <typename T>
inline constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));

template <typename T, int W>
__device__ __forceinline__ void load_group(const T* x, std::int64_t i, float (&out)[W]) {
  if constexpr (W == 1) {
    out[0] = load_elem(x, i);
  } else {
    static_assert(W == kVecWidth<T>, "a group is one 16-byte vector");
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(x + i));
    const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if constexpr (sizeof(T) == 4) {
        out[j] = __uint_as_float(w[j]);
      } else {
        out[j] = __uint_as_float((j & 1) != 0 ? w[j >> 1] & 0xFFFF0000U : w[j >> 1] << 16);
      }
    }
  }
}

// Calls f(values, first_id) for every group of [begin, end) this thread
// owns: group g of a step holds ids step_base + (g * kThreads + tid) * W.
// Every thread runs the same number of steps and calls f for all U groups
// (ids past `end` read as -inf), so f may use warp votes. begin and end are
// multiples of W.
template <typename T, int W, int U, int kThreads, typename F>
__device__ __forceinline__ void for_each_group(const T* x, std::int64_t begin, std::int64_t end,
                                               F&& f) {
  constexpr std::int64_t kStep = static_cast<std::int64_t>(kThreads) * W * U;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t base = begin; base < end; base += kStep) {
    float v[U][W];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t i = base + (static_cast<std::int64_t>(u) * kThreads + tid) * W;
      if (i < end) {
        load_group<T, W>(x, i, v[u]);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) v[u][j] = kNegInf;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) f(v[u], base + (static_cast<std::int64_t>(u) * kThreads + tid) * W);
  }
}

// Whether rows of `vocab` elements of T starting at `data` can take 16-byte
// loads (every row start aligned).
inline bool rows_vectorizable(const void* data, std::int64_t vocab, std::size_t elem_size) {
  const auto w = static_cast<std::int64_t>(16 / elem_size);
  return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && vocab % w == 0;
}

}  // namespace nextok::cuda::dev
