// Stages 1-11 (spec order) for one row per cluster: load + mask, bias and
// penalties, max, temperature weights e (the host's exp, bit for bit),
// top-p / min-p / top-k by radix select on the bits of e with exact
// per-bucket masses, then the inverse-CDF draw in id order.
#pragma once

#include "backend/cuda/launch.hpp"
#include "backend/cuda/row_cluster.cuh"
#include "nextok/cuda.hpp"

namespace nextok::cuda::dev {

using detail::kPathCounters;
using detail::kPathFast;
using detail::kPathKfirstFast;
using detail::kPathKfirstRadix;
using detail::kPathKfirstWarpTail;
using detail::kPathRadix;
using detail::kPathWarpTail;

// Small batches pass their RowParams inside the kernel arguments (no
// host-to-device copy before the launch); params is then null.
constexpr int kInlineRows = 16;

struct PipelineArgs {
  const void* logits;
  bool bf16;
  std::int64_t vocab;
  std::int32_t slice_len;   // L
  std::int32_t per_thread;  // P
  const RowParams* params;  // [B] in device memory, or null: inline_params
  PipelineInputs in;
  RngState* rng;
  PipelineOutputs out;
  RowParams inline_params[kInlineRows];
  bool stamp;  // profiling: rank 0 of row 0 writes g_pipeline_stamps
};

// Profiling hook: clock64() of block rank 0 of row 0 at stage boundaries,
// [15] = globaltimer ns from start to end.
__device__ long long g_pipeline_stamps[16];
__device__ __forceinline__ void stamp_at(bool on, int i) {
  if (on && blockIdx.x == 0 && threadIdx.x == 0) g_pipeline_stamps[i] = clock64();
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Profiling hook: globaltimer ns of every block of row 0 (up to 16) at
// entry, after stages 1, 3 and 6, and before the max exchange: launch skew and barrier waits.
__device__ unsigned long long g_block_ns[16][5];
__device__ __forceinline__ void block_stamp(bool on, int i) {
  if (on && blockIdx.x < 16 && threadIdx.x == 0) g_block_ns[blockIdx.x][i] = global_ns();
}

// Test hook: sampled rows per path (one atomic per row, by rank 0's thread
// 0), indexed by PathCounter.
__device__ unsigned long long g_pipeline_paths[kPathCounters];

__device__ __forceinline__ RowParams row_params(const PipelineArgs& a, int row) {
  if (a.params != nullptr) return a.params[row];
  RowParams p = a.inline_params[0];
#pragma unroll
  for (int i = 1; i < kInlineRows; ++i)
    if (row == i) p = a.inline_params[i];
  return p;
}

// Element j of a 16-byte vector of T.
__device__ __forceinline__ float vec_elem(const uint4& v, int j, const float*) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
  return __uint_as_float(w[j]);
}
__device__ __forceinline__ float vec_elem(const uint4& v, int j, const std::uint16_t*) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
  return __uint_as_float(j & 1 ? w[j >> 1] & 0xFFFF0000U : w[j >> 1] << 16);
}

template <typename T>
__device__ void load_slice(RowCtx& c, const T* x, std::int64_t vocab, const std::uint32_t* mask,
                           int n_local, int& nan) {
  float* s = c.sm->slice;
  const int cap = c.cap();
  const T* src = x + c.base;
  int done = 0;
  // 16-byte loads when the slice start is aligned: one round of requests
  // covers the slice (stage 1 is latency-bound).
  constexpr int kVe = 16 / sizeof(T);
  if ((reinterpret_cast<std::uintptr_t>(src) & 15U) == 0) {
    const int nv = n_local / kVe;
    const auto* v16 = reinterpret_cast<const uint4*>(src);
    constexpr int kU = 4;
    for (int q0 = 0; q0 < nv; q0 += kRowThreads * kU) {
      uint4 v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int q = q0 + u * kRowThreads + c.tid();
        if (q < nv) v[u] = __ldg(v16 + q);
      }
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const int q = q0 + u * kRowThreads + c.tid();
        if (q >= nv) continue;
        float f[kVe];
#pragma unroll
        for (int j = 0; j < kVe; ++j) {
          f[j] = vec_elem(v[u], j, src);
          nan |= f[j] != f[j] ? 1 : 0;
          if (!mask_allows(mask, c.base + q * kVe + j)) f[j] = kNegInf;
        }
#pragma unroll
        for (int j = 0; j < kVe; j += 4)
          *reinterpret_cast<float4*>(s + q * kVe + j) =
              make_float4(f[j], f[j + 1], f[j + 2], f[j + 3]);
      }
    }
    done = nv * kVe;
  }
  for (int xi = done + c.tid(); xi < cap; xi += kRowThreads) {
    const float f = xi < n_local ? load_elem(x, c.base + xi) : kNegInf;
    nan |= f != f ? 1 : 0;
    s[xi] = (xi < n_local && mask_allows(mask, c.base + xi)) ? f : kNegInf;
  }
  (void)vocab;
}

// Stages 2-5 on this block's slice; returns true if the window holds an id
// outside [0, V) (every block sees the whole window, so all agree).
__device__ bool apply_penalties(RowCtx& c, const RowParams& p, const PipelineInputs& in, int row,
                                std::int64_t vocab, int n_local) {
  float* s = c.sm->slice;
  auto mine = [&](std::int64_t id) { return id >= c.base && id < c.base + n_local; };
  if (in.bias_offsets != nullptr && c.tid() == 0) {
    // In list order: repeated ids add up in the host's order.
    for (int k = in.bias_offsets[row]; k < in.bias_offsets[row + 1]; ++k) {
      const std::int64_t id = in.bias_ids[k];
      if (id >= 0 && id < vocab && mine(id)) s[id - c.base] += in.bias_values[k];
    }
  }
  __syncthreads();
  if (in.history == nullptr) return false;
  const std::int32_t len = in.history_len[row];
  const std::int32_t take = min(static_cast<std::int32_t>(p.window), len);
  const std::int32_t* win =
      in.history + static_cast<std::int64_t>(row) * in.history_stride + (len - take);
  int bad = 0;
  const bool rep = p.repetition_penalty != 1.0f, pres = p.presence_penalty != 0.0f,
             freq = p.frequency_penalty != 0.0f;
  for (int j = c.tid(); j < take; j += kRowThreads) {
    const std::int32_t id = win[j];
    if (id < 0 || id >= vocab) {
      bad = 1;
      continue;
    }
    bool first = true;
    for (int k = 0; k < j && first; ++k) first = win[k] != id;
    if (!first || !mine(id)) continue;
    int n = 0;
    for (int k = j; k < take; ++k) n += win[k] == id ? 1 : 0;
    float& w = s[id - c.base];
    if (rep) w = w < 0.0f ? w * p.repetition_penalty : w / p.repetition_penalty;
    if (pres) w -= p.presence_penalty;
    if (freq) w -= p.frequency_penalty * static_cast<float>(n);
  }
  return c.block_or(bad) != 0;
}

// Fast path: a weight ladder finds a small candidate set that provably holds
// every survivor; the candidates are gathered (in id order) into rank 0's
// shared memory and rank 0 alone ranks them, filters them and draws.
// Returns false (every block alike) when no ladder level is both sufficient
// and small enough; the caller then runs the full radix path.
constexpr int kLevels = 16;
constexpr int kCandCap = 2 * kRowThreads;
static_assert(kRowThreads == 32 * 32, "warp 0 folds exactly 32 per-warp results");
__constant__ float kLadder[kLevels] = {
    0.70710678f,  0.5f,          0.35355339f,      0.25f,
    0.17677670f,  0.125f,        0.088388348f,     0.0625f,
    0.044194174f, 0.03125f,      0.022097087f,     0.015625f,
    0.00390625f,  0.0009765625f, 0.0001220703125f, 0.0000152587890625f};
__device__ __forceinline__ float ladder_level(int l) {
  return kLadder[l];
}
// e >= 2^-16, so e * 2^39 is an integer: exact, order-free masses.
__device__ __forceinline__ unsigned long long fixed39(float e) {
  const std::uint32_t k = __float_as_uint(e);
  const int ex = static_cast<int>((k >> 23) & 0xFFU);
  return static_cast<unsigned long long>((k & 0x7FFFFFU) | 0x800000U) << (ex - 111);
}

// Level of a weight 0 <= e <= 1 from its exponent: kk = 127 - exponent
// (e in [2^-kk, 2^(1-kk))). Levels 0-11 pair up per exponent (the power of
// two 2^-kk and the half step kLadder[2kk-2] inside [2^-kk, 2^(1-kk))): e
// and the half step share the exponent, so comparing significands decides
// (every half step's significand is 0x3504F3 except 0x3504F4 at kk = 3).
// Levels 12-15 are whole exponent ranges. Branch-free, no table loads:
// 4-bit fields of two 64-bit constants give, for kk = 0..15 (16 as 15),
// the level before the half-step bit and kmax - 1. Returns the same level
// as counting the thresholds above e (16: below 2^-16, or e == 0), which
// CudaPipeline.LadderLevelOfEveryFloat checks for every float in [0, 1].
// v = significand << (kmax - kk), kmax the largest kk of the level, so
// e * 2^39 = v << (16 - kmax): per-thread per-level sums fit in 32 bits
// (P < 64, v < 2^26).
constexpr unsigned long long kLevelBase = 0xFFEEEDDCCA864200ULL;  // kk 0..15
constexpr unsigned long long kLevelKmax = 0xFFCCC99775432100ULL;  // kmax - 1
__device__ __forceinline__ int ladder_bin(float e, std::uint32_t& v) {
  const std::uint32_t k = __float_as_uint(e);
  const int kk = max(127 - static_cast<int>(k >> 23), 0);
  const std::uint32_t mant = k & 0x7FFFFFU;
  const int kc = min(kk, 15);
  const int kmax = static_cast<int>((kLevelKmax >> (4 * kc)) & 15U) + 1;
  int lvl = static_cast<int>((kLevelBase >> (4 * kc)) & 15U);
  lvl += (kk >= 1 && kk <= 6 && mant < 0x3504F3U + (kk == 3 ? 1U : 0U)) ? 1 : 0;
  lvl = kk > 16 ? 16 : lvl;
  v = lvl < kLevels ? (mant | 0x800000U) << (kmax - kk) : 0U;
  return lvl;
}
__device__ __forceinline__ int ladder_kmax(int l) {
  return l < 12 ? l / 2 + 1 : (l == 12 ? 8 : (l == 13 ? 10 : (l == 14 ? 13 : 16)));
}

// Test hook: every float bit pattern in [0, 1] (0 .. 0x3F800000) against
// counting the thresholds above it, and its scaled mass against e * 2^39.
__global__ void ladder_check_kernel(unsigned long long* bad) {
  const std::uint32_t n = 0x3F800000U + 1U;
  unsigned long long mine = 0;
  for (std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += gridDim.x * blockDim.x) {
    const float e = __uint_as_float(k);
    int want = 0;
    for (int l = 0; l < kLevels; ++l) want += e < kLadder[l] ? 1 : 0;
    std::uint32_t v = 0;
    const int got = ladder_bin(e, v);
    bool ok = got == want;
    if (ok && got < kLevels) {
      const int kmax = ladder_kmax(got);
      ok = ldexp(static_cast<double>(v), 16 - kmax) == ldexp(static_cast<double>(e), 39);
    }
    mine += ok ? 0ULL : 1ULL;
  }
  if (mine != 0ULL) atomicAdd(bad, mine);
}

// The host's Pcg32::next_f32 for the state `old` (the caller advances it).
__device__ __forceinline__ float pcg_uniform(std::uint64_t old) {
  const std::uint32_t xs = static_cast<std::uint32_t>(((old >> 18U) ^ old) >> 27U);
  const std::uint32_t rot = static_cast<std::uint32_t>(old >> 59U);
  const std::uint32_t draw = (xs >> rot) | (xs << ((32U - rot) & 31U));
  return static_cast<float>(draw >> 8U) * 0x1p-24f;
}

// A sampled row's result: token, status, the row's PCG32 advanced past the
// draw of state `old`, and the path counters.
template <typename Out>
__device__ __forceinline__ void commit_draw(const Out& out, int row, std::int32_t token,
                                            RngState* g, std::uint64_t old, int path,
                                            int subpath = -1) {
  out.tokens[row] = token;
  out.status[row] = 0;
  g->state = old * Pcg32::kMultiplier + g->inc;
  atomicAdd(&g_pipeline_paths[path], 1ULL);
  if (subpath >= 0) atomicAdd(&g_pipeline_paths[subpath], 1ULL);
}

// top_k_first ladder: top-k runs first over every id and only needs counts,
// so the levels are taken on the exp argument t = w/T - m/T <= 0 itself (no
// exp per id), from the bits of d = -t (ordered like d): level i holds
// exactly the ids with bits(d) < lo + i * 2^sh (level 0: below lo; 16: no
// level). The coarse pass uses half octaves from lo = bits(0.375) (level 15:
// d < 64), the fine pass 1/16 octaves inside the chosen coarse level.
constexpr std::uint32_t kKfirstLo = 251U << 22;  // bits of 0.375
__device__ __forceinline__ int ladder_rel(float t, std::uint32_t lo, int sh) {
  const int rel = static_cast<int>(__float_as_uint(t) & 0x7FFFFFFFU) - static_cast<int>(lo);
  return rel < 0 ? 0 : min((rel >> sh) + 1, kLevels);
}
__device__ __forceinline__ float ladder_bound(std::uint32_t lo, int sh, int i) {
  return __uint_as_float(lo + (static_cast<std::uint32_t>(i) << sh));
}

// Test hook: exp_f32 is non-decreasing over every float in [-inf, 0] (the
// top_k_first ladder relies on it): counts the t whose next float up has a
// smaller exp.
__global__ void exp_monotone_check_kernel(unsigned long long* bad) {
  // Negative floats: bits 0x80000000 (-0) .. 0xFF800000 (-inf); the next
  // float up of bits k is k - 1.
  const std::uint32_t n = 0x7F800000U;
  unsigned long long mine = 0;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const std::uint32_t k = 0x80000001U + i;  // t = -(tiny) .. -inf
    mine += exp_f32(__uint_as_float(k)) > exp_f32(__uint_as_float(k - 1U)) ? 1ULL : 0ULL;
  }
  if (mine != 0ULL) atomicAdd(bad, mine);
}

// Stages 7-11 of the fast path for N <= 128 candidates, by warp 0 alone
// (lane l holds ranks / indexes 4l..4l+3): warp scans instead of block
// scans, no block barriers. Same flags and draw as the block version; the
// double sums run in another order (the documented near-tie exception).
// Spec order: top-p against `limit`, then min-p and top-k. top_k_first: top-k,
// then top-p against top_p times the top-k set's mass, then min-p.
constexpr int kWarpTailMax = 128;
template <typename Out>
__device__ void warp_tail(const RowParams& p, int N, const std::uint32_t* key,
                          const std::int32_t* ids, const std::uint32_t* ord_p,
                          const std::uint32_t* ord_k, std::uint32_t* flag, double limit, bool top_p,
                          bool min_p, bool top_k, bool k_first, std::int64_t vocab, int row,
                          RngState* rng, const Out& out) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int r0 = 4 * lane;
  auto excl = [&](auto mine) {
    auto inc = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const auto t = __shfl_up_sync(kFull, inc, o);
      if (lane >= o) inc += t;
    }
    return inc - mine;
  };
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
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      if (r0 + u < N) flag[ord_p[r0 + u]] = (!top_p || ex < limit) ? 1U : 0U;
      ex += v[u];
    }
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
  RngState* g = rng + row;
  const std::uint64_t old = g->state;
  const double target = static_cast<double>(pcg_uniform(old)) * S;
  int hit = INT32_MAX;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    if (hit == INT32_MAX && v[u] > 0.0 && lo + v[u] > target) hit = r0 + u;
    lo += v[u];
  }
  hit = static_cast<int>(__reduce_min_sync(kFull, static_cast<unsigned>(hit)));
  const int pick = hit != INT32_MAX ? hit : last;
  if (lane == 0)
    commit_draw(out, row, pick >= 0 ? ids[pick] : -1, g, old,
                k_first ? kPathKfirstFast : kPathFast,
                k_first ? kPathKfirstWarpTail : kPathWarpTail);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (r0 + u < N) pr[ids[r0 + u]] = v[u] > 0.0 ? static_cast<float>(v[u] / S) : 0.0f;
  }
}

// KFirst: the top_k_first order (top-k active): levels on t (ladder_rel),
// counts only, no weights until the gather; the slice keeps the logits.
// Otherwise the spec order: the slice is turned into the weights e.
template <bool KFirst, typename Out>
__device__ bool fast_pipeline(RowCtx& c, const RowParams& p, std::int64_t vocab, int n_local,
                              int row, RngState* rng, const Out& out, bool st, float inv_t,
                              float shift) {
  float* s = c.sm->slice;
  const int tid = c.tid(), warp = tid >> 5;
  auto* wcnt = reinterpret_cast<std::uint32_t*>(c.sm->local_sum[0]);        // [32][16]
  auto* wmass = reinterpret_cast<unsigned long long*>(c.sm->local_sum[1]);  // [32][16]
  std::uint32_t* bcnt = c.sm->g_cnt;                                        // [16]
  auto* bmass = reinterpret_cast<unsigned long long*>(c.sm->g_w);           // [16]
  const int x0 = tid * c.P;
  const int lane = tid & 31;
  const bool top_p = p.top_p > 0.0f && p.top_p < 1.0f;
  const bool min_p = p.min_p > 0.0f;
  const bool top_k = p.top_k > 0 && p.top_k < vocab;
  double mine = 0.0;
  // Stage 6 fused with the ladder binning: e = exp(w/T - m/T) in place and,
  // with e still in a register, its level (from the exponent) and exact
  // mass. Per thread: 8-bit counts packed four levels to a word (registers)
  // and, for top-p, one 32-bit scaled mass per level in a private
  // shared-memory column bin[l][tid] (conflict-free: 1024 is a multiple of
  // the 32 banks). Bins 0-11 live in local_cnt + local_sum (contiguous),
  // 12-15 in g_w; all are dead before the warp results are stored.
  // Then warp reductions. Same integers, same decision as 16 compares per id.
  static_assert(offsetof(RowSmem, local_sum) == sizeof(RowSmem::local_cnt), "bins 0-11");
  static_assert(sizeof(RowSmem::local_cnt) + sizeof(RowSmem::local_sum) >=
                    12 * kRowThreads * sizeof(std::uint32_t),
                "bins 0-11");
  static_assert(sizeof(RowSmem::g_w) >= 4 * kRowThreads * sizeof(std::uint32_t), "bins 12-15");
  std::uint32_t* bin_a = &c.sm->local_cnt[0][0] + tid;
  std::uint32_t* bin_b = reinterpret_cast<std::uint32_t*>(c.sm->g_w) + tid;
  auto bin = [&](int l) -> std::uint32_t& {
    return l < 12 ? bin_a[l * kRowThreads] : bin_b[(l - 12) * kRowThreads];
  };
  const bool masses = !KFirst && top_p;
  if (masses) {
#pragma unroll
    for (int l = 0; l < kLevels; ++l) bin(l) = 0;
  }
  std::uint32_t cp0 = 0, cp1 = 0, cp2 = 0, cp3 = 0;
  auto count = [&](int lvl) {
    const std::uint32_t inc = lvl < kLevels ? 1U << ((lvl & 3) * 8) : 0U;
    const int w = lvl >> 2;
    cp0 += w == 0 ? inc : 0U;
    cp1 += w == 1 ? inc : 0U;
    cp2 += w == 2 ? inc : 0U;
    cp3 += w == 3 ? inc : 0U;
  };
  // The exp argument, rounded as every pass rounds it.
  auto arg = [&](int xi) { return s[xi] * inv_t - shift; };
  if constexpr (KFirst) {
    for (int j = 0; j < c.P; ++j) count(ladder_rel(arg(x0 + j), kKfirstLo, 22));
  } else {
    // Branch-free body: e == 0 adds 0.0 to the sum and has level 16 (no
    // count, no mass).
    for (int j = 0; j < c.P; ++j) {
      const int xi = x0 + j;  // the thread's own chunk: n below needs it
      const float e = exp_f32(arg(xi));
      s[xi] = e;
      mine += static_cast<double>(e);
      std::uint32_t v = 0;
      const int lvl = ladder_bin(e, v);
      count(lvl);
      if (top_p && lvl < kLevels) bin(lvl) += v;
    }
  }
  stamp_at(st, 4);
  // The cluster's per-level counts (and masses) from the packed per-thread
  // counts: warp reductions (lane l of each warp keeps level l; lane 0 the
  // warp's double sum of e, summed by warp 0 in a fixed order: S), the block
  // fold into `bc` (and bmass), one exchange, then every (rank, level) count
  // in one parallel round of DSMEM loads into wcnt. Warp 0 scans the levels
  // and `decide(cumulative count, cumulative mass)` (every lane of
  // warp 0; ballot inside) returns the level, broadcast to the block.
  double limit = 0.0;
  auto level_table = [&](std::uint32_t* bc, auto decide) {
    unsigned my_cnt = 0;
    unsigned long long my_mass = 0;
    double ws = mine;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ws += __shfl_down_sync(kFull, ws, o);
    {
      const std::uint32_t cw[4] = {cp0, cp1, cp2, cp3};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        // Bytes 0,2 and 1,3 summed in 16-bit fields (<= 32 * 255).
        const unsigned ev = __reduce_add_sync(kFull, cw[q] & 0x00FF00FFU);
        const unsigned od = __reduce_add_sync(kFull, (cw[q] >> 8) & 0x00FF00FFU);
        if (lane == 4 * q + 0) my_cnt = ev & 0xFFFFU;
        if (lane == 4 * q + 1) my_cnt = od & 0xFFFFU;
        if (lane == 4 * q + 2) my_cnt = ev >> 16;
        if (lane == 4 * q + 3) my_cnt = od >> 16;
      }
      if (masses) {
#pragma unroll
        for (int l = 0; l < kLevels; ++l) {
          const std::uint32_t m = bin(l);
          const unsigned lo = __reduce_add_sync(kFull, m & 0xFFFFU);
          const unsigned hi = __reduce_add_sync(kFull, m >> 16);
          if (lane == l)
            my_mass =
                ((static_cast<unsigned long long>(hi) << 16) + static_cast<unsigned long long>(lo))
                << (16 - ladder_kmax(l));
        }
      }
    }
    __syncthreads();                         // every bin read: the warp results may overwrite them
    double* wsum = c.sm->g_w + 2 * kLevels;  // [32], after bmass[16]
    if (lane < kLevels) {
      wcnt[warp * kLevels + lane] = my_cnt;
      wmass[warp * kLevels + lane] = my_mass;
    }
    if (lane == 0) wsum[warp] = ws;
    __syncthreads();
    stamp_at(st, 5);
    if (tid < kLevels) {
      std::uint32_t n = 0;
      unsigned long long m = 0;
      for (int w = 0; w < kRowThreads / 32; ++w) {
        n += wcnt[w * kLevels + tid];
        m += wmass[w * kLevels + tid];
      }
      bc[tid] = n;
      bmass[tid] = m;
    }
    double block_total = 0.0;
    if (warp == 0) {
      block_total = wsum[lane];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) block_total += __shfl_down_sync(kFull, block_total, o);
    }
    const int ph = c.exchange(Slot{block_total, 0, 0, 0, 0});  // tid 0 posts
    double total = 0.0;
    for (int r = 0; r < c.csize; ++r) total += c.peer(r, ph).d0;
    limit = static_cast<double>(p.top_p) * total;
    stamp_at(st, 6);
    block_stamp(st, 3);
    if (tid < kLevels * c.csize) {
      const int r = tid / kLevels, l = tid % kLevels;
      wcnt[tid] = c.cl.map_shared_rank(bc, r)[l];
      if (masses) wmass[tid] = c.cl.map_shared_rank(bmass, r)[l];
    }
    __syncthreads();
    if (warp == 0) {
      std::int64_t cnt = 0;
      unsigned long long mass = 0;
      if (lane < kLevels) {
        for (int r = 0; r < c.csize; ++r) {
          cnt += wcnt[r * kLevels + lane];
          if (masses) mass += wmass[r * kLevels + lane];
        }
      }
      for (int o = 1; o < 32; o <<= 1) {
        const std::int64_t nc = __shfl_up_sync(kFull, cnt, o);
        const unsigned long long nm = __shfl_up_sync(kFull, mass, o);
        if (lane >= o) {
          cnt += nc;
          mass += nm;
        }
      }
      const int lvl = decide(cnt, mass);
      if (lane == 0) c.bs->bcast_i[1] = lvl;
    }
    __syncthreads();
    const int out_level = c.bs->bcast_i[1];
    __syncthreads();
    return out_level;
  };
  int level = -1;
  std::uint32_t lo2 = 0;  // top_k_first: the fine ladder's start (bits of d)
  if constexpr (KFirst) {
    // Coarse: L, the first level holding k ids. A second pass splits level L
    // (and the next) into 1/16-octave steps: fine level i holds exactly the
    // ids with bits(d) < lo2 + i * 2^19, and fine level 8 is the end of L,
    // so some fine level J <= 8 holds k ids. Gathering level J + 1 keeps a
    // gap: the k-th largest weight is >= exp(-bound(J)), every id outside
    // has weight <= exp(-bound(J + 1)), smaller (exp_f32 is non-decreasing),
    // so the top-k set lies inside the candidates.
    const int L = level_table(bcnt, [&](std::int64_t cnt, unsigned long long) {
      const unsigned bal = __ballot_sync(kFull, lane < kLevels && cnt >= p.top_k);
      return bal != 0U ? __ffs(bal) - 1 : -1;
    });
    if (L < 0) return false;
    lo2 = static_cast<std::uint32_t>(static_cast<int>(kKfirstLo) + (L - 1) * (1 << 22));
    cp0 = cp1 = cp2 = cp3 = 0;
    for (int j = 0; j < c.P; ++j) count(ladder_rel(arg(x0 + j), lo2, 19));
    level = level_table(bcnt + kLevels, [&](std::int64_t cnt, unsigned long long) {
      const unsigned bal = __ballot_sync(kFull, lane < kLevels && cnt >= p.top_k);
      const int J = bal != 0U ? __ffs(bal) - 1 : kLevels;
      const int G = J + 1;
      const std::int64_t cnt_g = __shfl_sync(kFull, cnt, min(G, 31));
      const bool ok = G < kLevels && cnt_g <= kCandCap &&
                      exp_f32(-ladder_bound(lo2, 19, J)) > exp_f32(-ladder_bound(lo2, 19, G));
      return ok ? G : -1;
    });
  } else {
    level = level_table(bcnt, [&](std::int64_t cnt, unsigned long long mass) {
      bool ok = false;
      if (lane < kLevels && cnt > 0 && cnt <= kCandCap) {
        const float tau = ladder_level(lane);
        ok = (top_k && cnt >= p.top_k) || (min_p && p.min_p >= tau) ||
             (top_p && ldexp(static_cast<double>(mass), -39) >= limit * (1.0 + 1e-9));
      }
      const unsigned bal = __ballot_sync(kFull, ok);
      return bal != 0U ? __ffs(bal) - 1 : -1;
    });
  }
  stamp_at(st, 7);
  if (level < 0) return false;
  const float tau = ladder_level(level);
  // Whether slice entry xi is a candidate; its weight.
  auto candidate = [&](int xi) {
    if constexpr (KFirst) return ladder_rel(arg(xi), lo2, 19) <= level;
    return s[xi] >= tau;
  };
  auto weight_of = [&](int xi) {
    if constexpr (KFirst) return exp_f32(arg(xi));
    return s[xi];
  };

  // Gather e >= tau in id order into rank 0: key bits and ids.
  // n = this thread's ids with e >= tau = its counts of levels <= level.
  auto low_bytes = [](std::uint32_t w, int nb) {
    const std::uint32_t m = nb >= 4 ? 0xFFFFFFFFU : (nb <= 0 ? 0U : (1U << (8 * nb)) - 1U);
    return static_cast<int>(__dp4a(w & m, 0x01010101U, 0U));
  };
  int n = low_bytes(cp0, level + 1) + low_bytes(cp1, level - 3) + low_bytes(cp2, level - 7) +
          low_bytes(cp3, level - 11);
  int pre = 0;
  int all_n = 0;
  pre = c.block_exclusive_sum(n, all_n);
  // Every rank's count of e >= tau is already in the (rank, level) table
  // (wcnt, loaded above): no exchange. Lane r sums rank r's levels <= level.
  int q = 0;
  if (lane < c.csize)
    for (int l = 0; l <= level; ++l) q += static_cast<int>(wcnt[lane * kLevels + l]);
  const int before = static_cast<int>(__reduce_add_sync(kFull, lane < c.rank ? q : 0));
  const int N = static_cast<int>(__reduce_add_sync(kFull, q));
  std::uint32_t* ckey = c.cl.map_shared_rank(c.sm->local_cnt[0], 0);
  std::int32_t* cid = reinterpret_cast<std::int32_t*>(c.cl.map_shared_rank(c.sm->local_cnt[1], 0));
  int pos = before + pre;
  for (int j = 0; j < c.P && n > 0; ++j) {
    if (candidate(x0 + j)) {
      ckey[pos] = __float_as_uint(weight_of(x0 + j));
      cid[pos] = static_cast<std::int32_t>(c.base + x0 + j);
      ++pos;
      --n;
    }
  }
  c.cl.sync();
  stamp_at(st, 8);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
    for (int xi = tid; xi < n_local; xi += kRowThreads)
      if (!candidate(xi)) pr[c.base + xi] = 0.0f;
  }
  if (c.rank != 0) return true;

  // Rank 0: ranks of every candidate in (e desc, id asc) and (e desc, id desc).
  const std::uint32_t* key = c.sm->local_cnt[0];
  const auto* ids = reinterpret_cast<const std::int32_t*>(c.sm->local_cnt[1]);
  std::uint32_t* ord_p = c.sm->g_cnt;                                  // by rank_p
  auto* ord_k = reinterpret_cast<std::uint32_t*>(c.sm->local_sum[0]);  // by rank_k
  auto* flag = reinterpret_cast<std::uint32_t*>(c.sm->local_sum[1]);   // by idx
  // grp threads per candidate (a power of two <= 32, as many as fit in the
  // block): each counts over every grp-th other candidate, then the partial
  // integer counts are summed with xor shuffles inside the group. The sweep
  // loop is block-uniform; warps without a candidate in a sweep skip it.
  int grp = 1;
  while (grp < 32 && N * (2 * grp) <= kRowThreads) grp *= 2;
  const int gi = tid / grp, gl = tid % grp, per = kRowThreads / grp;
  for (int i0 = 0; i0 < N; i0 += per) {
    if (i0 + (warp * 32) / grp >= N) continue;  // warp-uniform
    const int i = i0 + gi;
    const bool act = i < N;
    const std::uint32_t ki = act ? key[i] : 0U;
    int gt = 0, eq = 0, lo = 0;
    if (act) {
#pragma unroll 4
      for (int j = gl; j < N; j += grp) {
        const std::uint32_t kj = key[j];
        gt += kj > ki ? 1 : 0;
        eq += kj == ki ? 1 : 0;
        lo += (kj == ki && j < i) ? 1 : 0;
      }
    }
    for (int o = 1; o < grp; o <<= 1) {
      gt += __shfl_xor_sync(kFull, gt, o);
      eq += __shfl_xor_sync(kFull, eq, o);
      lo += __shfl_xor_sync(kFull, lo, o);
    }
    if (act && gl == 0) {
      ord_k[gt + lo] = static_cast<std::uint32_t>(i);
      ord_p[gt + (eq - 1 - lo)] = static_cast<std::uint32_t>(i);
    }
  }
  __syncthreads();
  stamp_at(st, 9);
  if (N <= kWarpTailMax) {
    if (warp == 0)
      warp_tail(p, N, key, ids, ord_p, ord_k, flag, limit, top_p, min_p, top_k, KFirst, vocab, row,
                rng, out);
    stamp_at(st, 10);
    stamp_at(st, 11);
    return true;
  }
  auto weight = [&](std::uint32_t i) { return static_cast<double>(__uint_as_float(key[i])); };
  if constexpr (KFirst) {
    // Top-k: the first k in (e desc, id asc) order.
    const int a = 2 * tid, b = 2 * tid + 1;
    if (a < N) flag[ord_k[a]] = a < p.top_k ? 1U : 0U;
    if (b < N) flag[ord_k[b]] = b < p.top_k ? 1U : 0U;
    __syncthreads();
    // Top-p among the top-k set in (e desc, id desc) order against top_p
    // times its mass, then min-p. Each thread rewrites only its own entries.
    const bool ka = a < N && flag[ord_p[a]] != 0U, kb = b < N && flag[ord_p[b]] != 0U;
    const double va = ka ? weight(ord_p[a]) : 0.0, vb = kb ? weight(ord_p[b]) : 0.0;
    double ex = 0.0, mass_k = 0.0;
    BlockScanD(c.bs->cub.sd).ExclusiveSum(va + vb, ex, mass_k);
    const double lim = static_cast<double>(p.top_p) * mass_k;
    const double mp = static_cast<double>(p.min_p);
    if (a < N) flag[ord_p[a]] = (ka && (!top_p || ex < lim) && (!min_p || va >= mp)) ? 1U : 0U;
    if (b < N)
      flag[ord_p[b]] = (kb && (!top_p || ex + va < lim) && (!min_p || vb >= mp)) ? 1U : 0U;
    __syncthreads();
  } else {
  // Top-p in (e desc, id desc) order: keep while the mass before < limit.
  {
    const int a = 2 * tid, b = 2 * tid + 1;
    const double va = a < N ? weight(ord_p[a]) : 0.0;
    const double vb = b < N ? weight(ord_p[b]) : 0.0;
    double ex = 0.0;
    BlockScanD(c.bs->cub.sd).ExclusiveSum(va + vb, ex);
    if (a < N) flag[ord_p[a]] = (!top_p || ex < limit) ? 1U : 0U;
    if (b < N) flag[ord_p[b]] = (!top_p || ex + va < limit) ? 1U : 0U;
  }
  __syncthreads();
  // Min-p, then top-k in (e desc, id asc) order among the survivors.
  {
    const int a = 2 * tid, b = 2 * tid + 1;
    auto s1 = [&](int r) {
      if (r >= N) return 0;
      const std::uint32_t i = ord_k[r];
      return (flag[i] != 0U && (!min_p || __uint_as_float(key[i]) >= p.min_p)) ? 1 : 0;
    };
    const int fa = s1(a), fb = s1(b);
    int ex = 0;
    int all_f = 0;
    ex = c.block_exclusive_sum(fa + fb, all_f);
    __syncthreads();
    if (a < N) flag[ord_k[a]] = (fa != 0 && (!top_k || ex < p.top_k)) ? 1U : 0U;
    if (b < N) flag[ord_k[b]] = (fb != 0 && (!top_k || ex + fa < p.top_k)) ? 1U : 0U;
  }
  __syncthreads();
  }
  stamp_at(st, 10);
  // Draw in id order.
  const int a = 2 * tid, b = 2 * tid + 1;
  const bool sa = a < N && flag[a] != 0U, sb = b < N && flag[b] != 0U;
  const double va = sa ? static_cast<double>(__uint_as_float(key[a])) : 0.0;
  const double vb = sb ? static_cast<double>(__uint_as_float(key[b])) : 0.0;
  double lo = 0.0, S = 0.0;
  BlockScanD(c.bs->cub.sd).ExclusiveSum(va + vb, lo, S);
  __syncthreads();
  const int last = c.block_max_i(sb ? b : (sa ? a : -1));
  RngState* g = rng + row;
  const std::uint64_t old = g->state;
  const float u = pcg_uniform(old);
  const double target = static_cast<double>(u) * S;
  if (tid == 0) c.bs->bcast_i[0] = INT32_MAX;
  __syncthreads();
  int hit = INT32_MAX;
  if (sa && lo + va > target) {
    hit = a;
  } else if (sb && lo + va + vb > target) {
    hit = b;
  }
  if (hit != INT32_MAX) atomicMin(&c.bs->bcast_i[0], hit);
  __syncthreads();
  const int pick = c.bs->bcast_i[0] != INT32_MAX ? c.bs->bcast_i[0] : last;
  if (tid == 0)  // -1: nothing survived, as below
    commit_draw(out, row, pick >= 0 ? ids[pick] : -1, g, old, KFirst ? kPathKfirstFast : kPathFast);
  stamp_at(st, 11);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
    if (a < N) pr[ids[a]] = sa ? static_cast<float>(va / S) : 0.0f;
    if (b < N) pr[ids[b]] = sb ? static_cast<float>(vb / S) : 0.0f;
  }
  return true;
}

// kKfirst: the batch has top_k_first rows. Batches without them run the
// instance without that code (a smaller kernel: ~0.7 us at B = 1).
template <bool kKfirst>
__global__ void __launch_bounds__(kRowThreads, 1) pipeline_kernel(PipelineArgs a) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ BlockStorage bs;
  const bool st = a.stamp;
  const unsigned long long t_start = st ? global_ns() : 0ULL;
  stamp_at(st, 0);
  block_stamp(st, 0);
  RowCtx c{cg::this_cluster(), 0, 0, a.per_thread, 0, reinterpret_cast<RowSmem*>(dyn), &bs, 0};
  c.rank = static_cast<int>(c.cl.block_rank());
  c.csize = static_cast<int>(c.cl.num_blocks());
  const int row = static_cast<int>(blockIdx.x) / c.csize;
  c.base = static_cast<std::int64_t>(c.rank) * a.slice_len;
  const int n_local = local_count(a.vocab, c.base, a.slice_len);
  if (c.tid() == 0) bs.hist_buf = 0;
  const RowParams p = row_params(a, row);
  const std::uint32_t* mask =
      a.in.mask == nullptr ? nullptr
                           : a.in.mask + static_cast<std::int64_t>(row) * ((a.vocab + 31) / 32);
  float* s = c.sm->slice;

  // Stage 1.
  int nan = 0;
  if (a.bf16) {
    load_slice(c, static_cast<const std::uint16_t*>(a.logits) + row * a.vocab, a.vocab, mask,
               n_local, nan);
  } else {
    load_slice(c, static_cast<const float*>(a.logits) + row * a.vocab, a.vocab, mask, n_local, nan);
  }
  nan = c.block_or(nan);
  stamp_at(st, 1);
  block_stamp(st, 1);
  const bool bad_history = apply_penalties(c, p, a.in, row, a.vocab, n_local);
  stamp_at(st, 2);

  // Max / argmax of the processed logits.
  ArgMax am{kNegInf, INT32_MAX};
  const int x0 = c.tid() * c.P;
  // Ids ascend along the chunk: a strict > keeps the lowest id of the max
  // (better()'s tie rule) and skips -inf and NaN, with selects, no branch.
  for (int j = 0; j < c.P; ++j) {
    const float v = s[x0 + j];
    const bool up = v > am.value;
    am.value = up ? v : am.value;
    am.index = up ? static_cast<std::int32_t>(c.base + x0 + j) : am.index;
  }
  // Warp shuffles, one block barrier, then warp 0 folds the 32 warp results
  // (better() is associative and commutative: any order gives the same pair).
  {
    const int lane = c.tid() & 31, warp = c.tid() >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      am = better(am, {__shfl_down_sync(kFull, am.value, o), __shfl_down_sync(kFull, am.index, o)});
    float* wv = reinterpret_cast<float*>(c.sm->local_cnt[0]);
    std::int32_t* wi = reinterpret_cast<std::int32_t*>(c.sm->local_cnt[1]);
    if (lane == 0) {
      wv[warp] = am.value;
      wi[warp] = am.index;
    }
    __syncthreads();
    if (warp == 0) {
      am = ArgMax{wv[lane], wi[lane]};
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        am = better(am,
                    {__shfl_down_sync(kFull, am.value, o), __shfl_down_sync(kFull, am.index, o)});
    }
  }
  block_stamp(st, 4);
  const int ph0 = c.exchange(Slot{am.value, 0, am.index, nan, 0});  // tid 0 posts
  ArgMax best{kNegInf, INT32_MAX};
  int any_nan = 0;
  for (int r = 0; r < c.csize; ++r) {
    const Slot& q = c.peer(r, ph0);
    if (q.i0 != INT32_MAX) best = better(best, {static_cast<float>(q.d0), q.i0});
    any_nan |= q.i1;
  }
  const float m = best.value;
  stamp_at(st, 3);
  block_stamp(st, 2);
  RowStatus status = RowStatus::kOk;
  if (any_nan) {
    status = RowStatus::kNanLogits;
  } else if (bad_history) {
    status = RowStatus::kBadHistory;
  } else if (best.index == INT32_MAX) {
    status = RowStatus::kNoViableToken;
  } else if (m == kPosInf) {
    status = RowStatus::kNonFiniteLogits;
  }
  const bool greedy = !(p.temperature > 0.0f);
  if (status != RowStatus::kOk || greedy) {
    if (c.rank == 0 && c.tid() == 0) {
      a.out.tokens[row] = status == RowStatus::kOk ? best.index : -1;
      a.out.status[row] = static_cast<std::int32_t>(status);
    }
    if (a.out.probs != nullptr) {
      float* pr = a.out.probs + row * a.vocab;
      for (int xi = c.tid(); xi < n_local; xi += kRowThreads)
        pr[c.base + xi] = (status == RowStatus::kOk && c.base + xi == best.index) ? 1.0f : 0.0f;
    }
    c.cl.sync();
    return;
  }

  // Stage 6: e = exp(w/T - m/T), in place (inside fast_pipeline, fused
  // with the ladder binning; the radix path below reuses the weights).
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(p.temperature));
  const float shift = m * inv_t;
  const bool top_p = p.top_p > 0.0f && p.top_p < 1.0f;
  const bool min_p = p.min_p > 0.0f;
  const bool top_k = p.top_k > 0 && p.top_k < a.vocab;
  const bool k_first = kKfirst && top_k && p.filter_order == FilterOrder::kTopKFirst;
  bool done = false;
  if constexpr (kKfirst) {
    done = k_first ? fast_pipeline<true>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t, shift)
                   : fast_pipeline<false>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t, shift);
  } else {
    done = fast_pipeline<false>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t, shift);
  }
  if (done) {
    if (st && blockIdx.x == 0 && threadIdx.x == 0)
      g_pipeline_stamps[15] = static_cast<long long>(global_ns() - t_start);
    return;
  }
  if (k_first) {  // the top_k_first ladder left the logits in place
    for (int j = 0; j < c.P; ++j) s[x0 + j] = exp_f32(s[x0 + j] * inv_t - shift);
    __syncthreads();
  }
  auto key = [&](int xi) { return __float_as_uint(s[xi]); };
  auto nonzero = [&](int xi, std::int64_t) { return s[xi] > 0.0f; };

  // Stage 7: top-p among the ids `in` selects (every id with a weight, or
  // top_k_first: the top-k set), against top_p times their mass; the
  // boundary tie group is cut by id (higher ids survive).
  Boundary bp{false, 0, 0, 0, 0};
  std::int32_t cut_p = 0;
  auto top_p_cut = [&](auto in) {
    auto elem = [&](int xi, std::int64_t id) { return Elem{in(xi, id), key(xi)}; };
    bp = radix_select(c, elem, true, [&](double z) { return static_cast<double>(p.top_p) * z; });
    if (bp.found) {
      const double limit = static_cast<double>(p.top_p) * bp.total;
      const double v = static_cast<double>(__uint_as_float(bp.key));
      // Tie members kept walking down from the top: before = above + j*v < limit.
      const double est = ceil((limit - bp.above) / v);
      std::int64_t n_keep =
          est < 1.0 ? 1 : (est > bp.tie ? bp.tie : static_cast<std::int64_t>(est));
      while (n_keep > 1 && bp.above + static_cast<double>(n_keep - 1) * v >= limit) --n_keep;
      while (n_keep < bp.tie && bp.above + static_cast<double>(n_keep) * v < limit) ++n_keep;
      if (n_keep < bp.tie) {
        const std::uint32_t kv = bp.key;
        cut_p = id_at_rank(
            c, [&](int xi, std::int64_t id) { return in(xi, id) && key(xi) == kv; },
            bp.tie - n_keep);
      }
    }
  };
  auto pass_p = [&](int xi, std::int64_t id) {
    const std::uint32_t k = key(xi);
    return !top_p || !bp.found || k > bp.key || (k == bp.key && id >= cut_p);
  };
  // Stage 8: min-p (e_max == 1).
  auto pass_min_p = [&](int xi) { return !min_p || s[xi] >= p.min_p; };
  // Stage 9: top-k among the ids `in` selects, ties to the lowest ids.
  Boundary bk{false, 0, 0, 0, 0};
  std::int32_t cut_k = INT32_MAX;
  auto top_k_cut = [&](auto in) {
    auto elem = [&](int xi, std::int64_t id) { return Elem{in(xi, id), key(xi)}; };
    const double k = p.top_k;
    bk = radix_select(c, elem, false, [&](double) { return k; });
    if (bk.found) {
      const auto room = static_cast<std::int64_t>(k - bk.above);
      if (room < bk.tie) {
        const std::uint32_t kv = bk.key;
        cut_k = id_at_rank(
            c, [&](int xi, std::int64_t id) { return in(xi, id) && key(xi) == kv; }, room);
      }
    }
  };
  auto pass_k = [&](int xi, std::int64_t id) {
    const std::uint32_t k = key(xi);
    return !top_k || !bk.found || k > bk.key || (k == bk.key && id < cut_k);
  };
  // Spec: top-p over every id, min-p, top-k over the survivors. top_k_first:
  // top-k over every id, top-p over the top-k set, min-p. A survivor passes
  // all three either way; only what each cut was chosen among differs.
  auto s1 = [&](int xi, std::int64_t id) {
    return nonzero(xi, id) && pass_p(xi, id) && pass_min_p(xi);
  };
  auto in_top_k = [&](int xi, std::int64_t id) { return nonzero(xi, id) && pass_k(xi, id); };
  if (k_first) {
    top_k_cut(nonzero);
    if (top_p) top_p_cut(in_top_k);
  } else {
    if (top_p) top_p_cut(nonzero);
    if (top_k) top_k_cut(s1);
  }
  auto survives = [&](int xi, std::int64_t id) { return s1(xi, id) && pass_k(xi, id); };

  // Stages 10-11: S, then the first survivor whose running sum exceeds u*S.
  double mine = 0.0;
  std::int32_t last = -1;
  for (int j = 0; j < c.P; ++j) {
    const int xi = x0 + j;
    if (survives(xi, c.base + xi)) {
      mine += static_cast<double>(s[xi]);
      last = static_cast<std::int32_t>(c.base + xi);
    }
  }
  double pre = 0.0, block_total = 0.0;
  BlockScanD(bs.cub.sd).ExclusiveSum(mine, pre);
  __syncthreads();
  block_total = c.block_sum(mine);
  const int block_last = c.block_max_i(last);
  const int ph1 = c.exchange(Slot{block_total, 0, block_last, 0, 0});
  double total = 0.0, before = 0.0;
  std::int32_t last_id = -1;
  for (int r = 0; r < c.csize; ++r) {
    const Slot& q = c.peer(r, ph1);
    if (r < c.rank) before += q.d0;
    total += q.d0;
    last_id = max(last_id, q.i0);
  }
  RngState* g = a.rng + row;
  const std::uint64_t old = g->state;
  const float u = pcg_uniform(old);
  const double target = static_cast<double>(u) * total;
  if (c.tid() == 0) bs.bcast_i[0] = INT32_MAX;
  __syncthreads();
  const double lo = before + pre;
  if (mine > 0.0 && lo + mine > target) atomicMin(&bs.bcast_i[0], c.tid());
  __syncthreads();
  if (c.tid() == bs.bcast_i[0]) {
    double cum = lo;
    std::int32_t tok = last;
    for (int j = 0; j < c.P; ++j) {
      const int xi = x0 + j;
      if (!survives(xi, c.base + xi)) continue;
      cum += static_cast<double>(s[xi]);
      if (cum > target) {
        tok = static_cast<std::int32_t>(c.base + xi);
        break;
      }
    }
    bs.bcast_i[1] = tok;
  }
  __syncthreads();
  const int found_here = bs.bcast_i[0] != INT32_MAX ? bs.bcast_i[1] : -1;
  __syncthreads();
  const int ph2 = c.exchange(Slot{0, 0, found_here, 0, 0});
  std::int32_t token = -1;
  for (int r = 0; r < c.csize && token < 0; ++r) token = c.peer(r, ph2).i0;
  if (token < 0) token = last_id;  // float drift past the end

  if (c.rank == 0 && c.tid() == 0)
    commit_draw(a.out, row, token, g, old, k_first ? kPathKfirstRadix : kPathRadix);
  if (a.out.probs != nullptr) {
    float* pr = a.out.probs + row * a.vocab;
    for (int xi = c.tid(); xi < n_local; xi += kRowThreads)
      pr[c.base + xi] =
          survives(xi, c.base + xi) ? static_cast<float>(static_cast<double>(s[xi]) / total) : 0.0f;
  }
  c.cl.sync();
}

}  // namespace nextok::cuda::dev
