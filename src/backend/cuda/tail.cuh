// The last stages of the fast path: the row's PCG32 uniform, the result
// commit, and the one-warp tail (filters and draw over <= 128 candidates).
#pragma once

#include "backend/cuda/hooks.cuh"
#include "backend/cuda/row_cluster.cuh"
#include "nextok/cuda.hpp"

namespace nextok::cuda::dev {

// Which of the row's filters are active (the host's rules).
struct Filters {
  bool top_p, min_p, top_k;
};
__device__ __forceinline__ Filters active_filters(const RowParams& p, std::int64_t vocab) {
  return {p.top_p > 0.0f && p.top_p<1.0f, p.min_p> 0.0f, p.top_k > 0 && p.top_k < vocab};
}

// The host's Pcg32::next_f32 for the state `old` (the caller advances it).
__device__ __forceinline__ float pcg_uniform(std::uint64_t old) {
  const std::uint32_t xs = static_cast<std::uint32_t>(((old >> 18U) ^ old) >> 27U);
  const std::uint32_t rot = static_cast<std::uint32_t>(old >> 59U);
  const std::uint32_t draw = (xs >> rot) | (xs << ((32U - rot) & 31U));
  return static_cast<float>(draw >> 8U) * 0x1p-24f;
}

// A sampled row's result: token, status, the row's PCG32 g advanced past
// the draw of its state `gen` (as loaded), and the path counters.
template <typename Out>
__device__ __forceinline__ void commit_draw(const Out& out, int row, std::int32_t token,
                                            RngState* g, const RngState& gen, int path,
                                            int subpath = -1) {
  out.tokens[row] = token;
  out.status[row] = 0;
  g->state = gen.state * Pcg32::kMultiplier + gen.inc;
  atomicAdd(&g_pipeline_paths[path], 1ULL);
  if (subpath >= 0) atomicAdd(&g_pipeline_paths[subpath], 1ULL);
}

// Stages 7-11 of the fast path for N <= 128 candidates, by warp 0 alone
// (lane l holds ranks / indexes 4l..4l+3): warp scans instead of block
// scans, no block barriers. Same flags and draw as the block version; the
// double sums run in another order (the documented near-tie exception).
// Spec order: top-p against `limit`, then min-p and top-k. top_k_first: top-k,
// then top-p against top_p times the top-k set's mass, then min-p.
// The spec order's limit may be known only within [limit, limit_hi) (a
// bound on the row's mass): where some candidate's mass before falls in
// that range the cut is not decided, and it returns false before the draw
// (nothing written, the generator not advanced). True once drawn. g: the
// row's generator, gen: its contents.
constexpr int kWarpTailMax = 128;
template <typename Out>
__device__ bool warp_tail(const RowParams& p, int N, const std::uint32_t* key,
                          const std::int32_t* ids, const std::uint32_t* ord_p,
                          const std::uint32_t* ord_k, std::uint32_t* flag, double limit,
                          double limit_hi, bool top_p, bool min_p, bool top_k, bool k_first,
                          std::int64_t vocab, int row, RngState* g, const RngState& gen,
                          const Out& out, int path, int warp_path) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int r0 = 4 * lane;
  auto excl = [&](auto mine) { return warp_inclusive_sum(mine) - mine; };
  auto weight = [&](std::uint32_t i) { return static_cast<double>(__uint_as_float(key[i])); };
  if (!k_first) {
    // Top-p in (e desc, id desc) order: keep while the mass before < limit.
    double v[4], tot = 0.0;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      v[u] = r0 + u < N ? weight(ord_p[r0 + u]) : 0.0;
      tot += v[u];
    }
    double ex = excl(tot);
    bool open = false;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (r0 + u < N) {
        flag[ord_p[r0 + u]] = (!top_p || ex < limit) ? 1U : 0U;
        open |= top_p && ex >= limit && ex < limit_hi;
      }
      ex += v[u];
    }
    if (__any_sync(kFull, open)) return false;
    __syncwarp();
    // Min-p, then top-k in (e desc, id asc) order among the survivors.
    int f[4], cnt = 0;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      f[u] = 0;
      if (r0 + u < N) {
        const std::uint32_t i = ord_k[r0 + u];
        f[u] = (flag[i] != 0U && (!min_p || __uint_as_float(key[i]) >= p.min_p)) ? 1 : 0;
      }
      cnt += f[u];
    }
    int exk = excl(cnt);
    __syncwarp();
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (r0 + u < N) flag[ord_k[r0 + u]] = (f[u] != 0 && (!top_k || exk < p.top_k)) ? 1U : 0U;
      exk += f[u];
    }
  } else {
    // Top-k: the first k in (e desc, id asc) order.
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (r0 + u < N) flag[ord_k[r0 + u]] = r0 + u < p.top_k ? 1U : 0U;
    __syncwarp();
    // Top-p among the top-k set in (e desc, id desc) order against top_p
    // times its mass, then min-p. Each lane rewrites only its own entries.
    double v[4], tot = 0.0;
    bool in_k[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      in_k[u] = r0 + u < N && flag[ord_p[r0 + u]] != 0U;
      v[u] = in_k[u] ? weight(ord_p[r0 + u]) : 0.0;
      tot += v[u];
    }
    double ex = excl(tot);
    const double lim = static_cast<double>(p.top_p) * __shfl_sync(kFull, ex + tot, 31);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (r0 + u < N)
        flag[ord_p[r0 + u]] =
            (in_k[u] && (!top_p || ex < lim) && (!min_p || v[u] >= static_cast<double>(p.min_p)))
                ? 1U
                : 0U;
      ex += v[u];
    }
  }
  __syncwarp();
  // Draw in id order.
  double v[4], tot = 0.0;
  int last = -1;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const bool sv = r0 + u < N && flag[r0 + u] != 0U;
    v[u] = sv ? weight(static_cast<std::uint32_t>(r0 + u)) : 0.0;
    if (sv) last = r0 + u;
    tot += v[u];
  }
  double lo = excl(tot);
  const double S = __shfl_sync(kFull, lo + tot, 31);
  last = __reduce_max_sync(kFull, static_cast<unsigned>(last + 1)) - 1;
  const double target = static_cast<double>(pcg_uniform(gen.state)) * S;
  int hit = INT32_MAX;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    if (hit == INT32_MAX && v[u] > 0.0 && lo + v[u] > target) hit = r0 + u;
    lo += v[u];
  }
  hit = static_cast<int>(__reduce_min_sync(kFull, static_cast<unsigned>(hit)));
  const int pick = hit != INT32_MAX ? hit : last;
  if (lane == 0) commit_draw(out, row, pick >= 0 ? ids[pick] : -1, g, gen, path, warp_path);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (r0 + u < N) pr[ids[r0 + u]] = v[u] > 0.0 ? static_cast<float>(v[u] / S) : 0.0f;
  }
  return true;
}

}  // namespace nextok::cuda::dev
