// Top-k logprobs (k <= 20) in one read of each row. A row is split over
// `splits` blocks; each block streams its part once, keeping per thread a
// running max with the sum of exp(x - max) rescaled when the max rises, and
// per warp the 20 best (value desc, id asc) as a list spread over the lanes.
// The last block of a row to finish folds the parts: the row's max and
// log-sum-exp, and the best 20 of the parts' lists. For f32 the warps of a
// block share a bar, the best of their lists' last entries: a value below
// it has 20 better ones in the block already, so no warp offers it (H100,
// B = 64: 64 -> 59 µs; bf16, whose groups are twice as long, was slower
// with it: 69 -> 72).
//
// Exactness: the ids are exact (raw-value comparisons, ties to the lower
// id, as the host). The normaliser's terms are the hardware exp (exp_approx,
// ~2 ulp) against the thread's max, summed in float per group of <= 8 and in
// double across groups, rescaled once per rise of the max: relative error
// ~3e-7 in the sum, ~3e-7 absolute in a logprob (the tests allow 1e-5).
#pragma once

#include <type_traits>

#include "backend/cuda/row_groups.cuh"
#include "nextok/config.hpp"
#include "nextok/cuda.hpp"

namespace nextok::cuda::dev {

constexpr int kLpThreads = 256;
constexpr int kLpWarps = kLpThreads / 32;
constexpr int kLpGroups = 4;  // groups in flight per thread
constexpr int kLpList = static_cast<int>(kMaxTopLogprobs);
static_assert(kLpList <= 32, "a list entry per lane");

struct LogprobsPart {
  double sum;  // of exp(x - max) over the part's ids
  float max;   // of the part's non-NaN values (-inf: none above -inf)
  std::int32_t nan;
  float v[kLpList];
  std::int32_t id[kLpList];
};

struct LogprobsArgs {
  const void* logits;
  std::int64_t vocab;
  std::int64_t chunk;  // ids per block, a multiple of the group width
  std::int32_t splits;
  const std::uint32_t* k;  // [B], device
  const std::int32_t* chosen;
  LogprobsPart* parts;  // [B, splits]
  unsigned* counters;   // [B], zero between launches
  LogprobsOutputs out;
};

__device__ __forceinline__ bool ranks_before(float av, std::int32_t ai, float bv, std::int32_t bi) {
  return av > bv || (av == bv && ai < bi);
}

// A warp's best kLpList entries: lane i < kLpList holds entry i; (tv, ti) is
// the last entry, the bar a newcomer must pass (every lane holds a copy).
struct WarpList {
  float v = kNegInf;
  std::int32_t id = INT32_MAX;
  float tv = kNegInf;
  std::int32_t ti = INT32_MAX;

  __device__ __forceinline__ bool passes(float x, std::int32_t i) const {
    return x > kNegInf && ranks_before(x, i, tv, ti);
  }
  // Offers each lane's (x, i) where `want` has its bit; warp-uniform call.
  __device__ __forceinline__ void insert(unsigned want, float x, std::int32_t i, int lane) {
    while (want != 0U) {
      const int src = __ffs(static_cast<int>(want)) - 1;
      want &= want - 1U;
      const float cv = __shfl_sync(0xffffffffU, x, src);
      const std::int32_t ci = __shfl_sync(0xffffffffU, i, src);
      if (!ranks_before(cv, ci, tv, ti)) continue;  // an earlier insert raised the bar
      const int pos =
          __popc(__ballot_sync(0xffffffffU, lane < kLpList && ranks_before(v, id, cv, ci)));
      const float uv = __shfl_up_sync(0xffffffffU, v, 1);
      const std::int32_t ui = __shfl_up_sync(0xffffffffU, id, 1);
      if (lane > pos) {
        v = uv;
        id = ui;
      } else if (lane == pos) {
        v = cv;
        id = ci;
      }
      tv = __shfl_sync(0xffffffffU, v, kLpList - 1);
      ti = __shfl_sync(0xffffffffU, id, kLpList - 1);
    }
  }
  // Sorts the warp's (x, i) best first, merges them with the list and keeps
  // the best 32 (lanes past kLpList hold the overflow, never read): about 20
  // shuffle rounds whatever the count, where insert pays ~7 per entry. The
  // list's first fill and a sorted run offer most lanes at once.
  __device__ __forceinline__ void insert_all(float x, std::int32_t i, int lane) {
#pragma unroll
    for (int k = 2; k <= 32; k <<= 1) {
#pragma unroll
      for (int j = k >> 1; j > 0; j >>= 1) exchange(x, i, lane, j, (lane & k) == 0);
    }
    // Two sequences sorted best first: the better of L[lane] and N[31 - lane]
    // are the best 32 of both, in bitonic order.
    const float rv = __shfl_sync(0xffffffffU, x, 31 - lane);
    const std::int32_t ri = __shfl_sync(0xffffffffU, i, 31 - lane);
    if (ranks_before(rv, ri, v, id)) {
      v = rv;
      id = ri;
    }
#pragma unroll
    for (int j = 16; j > 0; j >>= 1) exchange(v, id, lane, j, true);
    tv = __shfl_sync(0xffffffffU, v, kLpList - 1);
    ti = __shfl_sync(0xffffffffU, id, kLpList - 1);
  }
  // One bitonic step: lanes lane and lane ^ j compare; in a segment sorted
  // best first (`best_first`) the lower lane keeps the better entry.
  __device__ __forceinline__ static void exchange(float& xv, std::int32_t& xi, int lane, int j,
                                                  bool best_first) {
    const float ov = __shfl_xor_sync(0xffffffffU, xv, j);
    const std::int32_t oi = __shfl_xor_sync(0xffffffffU, xi, j);
    const bool keep_better = ((lane & j) == 0) == best_first;
    const bool take = keep_better ? ranks_before(ov, oi, xv, xi) : ranks_before(xv, xi, ov, oi);
    if (take) {
      xv = ov;
      xi = oi;
    }
  }
  // With kFloor, values below `floor` cannot be among the best (the
  // block's bar) and are not offered.
  template <bool kBulk = false, bool kFloor = false>
  __device__ __forceinline__ void offer(float x, std::int32_t i, int lane, float floor = kNegInf) {
    bool p = passes(x, i);
    if constexpr (kFloor) p = p && x >= floor;
    const unsigned want = __ballot_sync(0xffffffffU, p);
    if (kBulk && __popc(want) > kBulkInsert) {
      insert_all(p ? x : kNegInf, p ? i : INT32_MAX, lane);
    } else {
      insert(want, x, i, lane);
    }
  }
  static constexpr int kBulkInsert = 3;
};

// Folds the block's warp lists into warp 0's (every thread calls it).
__device__ __forceinline__ void merge_warp_lists(WarpList& wl, float (*sv)[kLpList],
                                                 std::int32_t (*si)[kLpList]) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  if (lane < kLpList) {
    sv[warp][lane] = wl.v;
    si[warp][lane] = wl.id;
  }
  __syncthreads();
  if (warp == 0) {
    for (int w = 1; w < kLpWarps; ++w) {
      const float x = lane < kLpList ? sv[w][lane] : kNegInf;
      const std::int32_t i = lane < kLpList ? si[w][lane] : INT32_MAX;
      wl.offer(x, i, lane);
    }
  }
  __syncthreads();
}

__device__ __forceinline__ double warp_sum(double s) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffU, s, o);
  return s;
}
__device__ __forceinline__ float warp_max(float m) {
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, o));
  return m;
}

struct LogprobsSmem {
  float bar;  // the best last entry of the block's warp lists so far
  float lv[kLpWarps][kLpList];
  std::int32_t li[kLpWarps][kLpList];
  float wmax[kLpWarps];
  double wsum[kLpWarps];
  bool last;
};

// Block max of m, then the block's sum of s * exp(m - max) (threads with
// m = -inf add nothing). Every thread gets both.
__device__ __forceinline__ void block_max_sum(float m, double s, LogprobsSmem& sm, float& max_out,
                                              double& sum_out) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  float bm = warp_max(m);
  if (lane == 0) sm.wmax[warp] = bm;
  __syncthreads();
  bm = sm.wmax[0];
  for (int w = 1; w < kLpWarps; ++w) bm = fmaxf(bm, sm.wmax[w]);
  const double scaled =
      m > kNegInf ? s * exp(static_cast<double>(m) - static_cast<double>(bm)) : 0.0;
  const double ws = warp_sum(scaled);
  if (lane == 0) sm.wsum[warp] = ws;
  __syncthreads();
  double total = 0.0;
  for (int w = 0; w < kLpWarps; ++w) total += sm.wsum[w];
  max_out = bm;
  sum_out = total;
  __syncthreads();  // wmax / wsum are reused
}

template <typename T, int W>
__global__ void __launch_bounds__(kLpThreads) logprobs_kernel(LogprobsArgs a) {
  __shared__ LogprobsSmem sm;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
  const int row = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(blockIdx.x);
  const T* x = static_cast<const T*>(a.logits) + static_cast<std::int64_t>(row) * a.vocab;
  const std::int64_t begin = split * a.chunk;
  const std::int64_t end = min(a.vocab, begin + a.chunk);

  float m = kNegInf;
  double s = 0.0;
  bool nan = false;
  WarpList wl;
  constexpr bool kShareBar = std::is_same_v<T, float>;
  if (kShareBar && tid == 0) sm.bar = kNegInf;
  if (kShareBar) __syncthreads();
  // Read and raised without synchronisation: any value it holds was some
  // warp's last entry, so it is a bar whichever one a warp reads.
  volatile float* bar = &sm.bar;
  for_each_group<T, W, kLpGroups, kLpThreads>(
      x, begin, end, [&](const float(&v)[W], std::int64_t i0) {
        float gm = kNegInf;
#pragma unroll
        for (int j = 0; j < W; ++j) {
          nan |= v[j] != v[j];
          gm = fmaxf(gm, v[j]);  // NaN-ignoring
        }
        if (gm > m) {
          if (m > kNegInf) s *= exp(static_cast<double>(m) - static_cast<double>(gm));
          m = gm;
        }
        // The group's terms summed in float (each <= 1, at most 8 of them),
        // then one double add: the chain of double adds was the loop's
        // latency.
        constexpr bool kF32 = std::is_same_v<T, float>;
        if constexpr (kF32) {
          float e[W];
#pragma unroll
          for (int j = 0; j < W; ++j) e[j] = exp_approx(v[j] - m);
#pragma unroll
          for (int w = 1; w < W; w *= 2) {
#pragma unroll
            for (int j = 0; j + w < W; j += 2 * w) e[j] += e[j + w];
          }
          s += static_cast<double>(e[0]);
        } else {
#pragma unroll
          for (int j = 0; j < W; ++j) s += static_cast<double>(exp_f32(v[j] - m));
        }
        // Most groups cannot reach the list: one vote skips them.
        if constexpr (kShareBar) {
          const float floor = *bar;
          if (__ballot_sync(0xffffffffU, gm > kNegInf && gm >= wl.tv && gm >= floor) == 0U) return;
#pragma unroll
          for (int j = 0; j < W; ++j) {
            wl.template offer<true, true>(v[j], static_cast<std::int32_t>(i0 + j), lane, floor);
          }
          if (lane == 0 && wl.tv > *bar) *bar = wl.tv;
        } else {
          if (__ballot_sync(0xffffffffU, gm > kNegInf && gm >= wl.tv) == 0U) return;
#pragma unroll
          for (int j = 0; j < W; ++j) wl.offer(v[j], static_cast<std::int32_t>(i0 + j), lane);
        }
      });
  const int any_nan = __syncthreads_or(nan ? 1 : 0);
  float bm = kNegInf;
  double bs = 0.0;
  block_max_sum(m, s, sm, bm, bs);
  merge_warp_lists(wl, sm.lv, sm.li);
  LogprobsPart& part = a.parts[static_cast<std::int64_t>(row) * a.splits + split];
  if (tid < 32) {
    if (lane < kLpList) {
      part.v[lane] = wl.v;
      part.id[lane] = wl.id;
    }
    if (lane == 0) {
      part.sum = bs;
      part.max = bm;
      part.nan = any_nan;
    }
    __threadfence();
  }
  __syncthreads();  // every writer has fenced before the count
  if (tid == 0) sm.last = atomicAdd(&a.counters[row], 1U) == static_cast<unsigned>(a.splits - 1);
  __syncthreads();
  if (!sm.last) return;
  __threadfence();

  // The last block: the row's max and NaN flag, then its sum.
  const LogprobsPart* parts = a.parts + static_cast<std::int64_t>(row) * a.splits;
  float pm = kNegInf;
  double ps = 0.0;
  int pnan = 0;
  for (int p = tid; p < a.splits; p += kLpThreads) {
    // Other blocks wrote these: read through L2 (__ldcg), not a stale L1.
    const float q = __ldcg(&parts[p].max);
    const double qs = __ldcg(&parts[p].sum);
    pnan |= __ldcg(&parts[p].nan);
    // Threads hold several parts: combine them as block_max_sum does.
    if (q > pm) {
      ps = pm > kNegInf ? ps * exp(static_cast<double>(pm) - static_cast<double>(q)) : 0.0;
      pm = q;
    }
    if (q > kNegInf) ps += qs * exp(static_cast<double>(q) - static_cast<double>(pm));
  }
  const int row_nan = __syncthreads_or(pnan);
  float rm = kNegInf;
  double total = 0.0;
  block_max_sum(pm, ps, sm, rm, total);
  const std::uint32_t k = a.k[row];
  RowStatus st = RowStatus::kOk;
  if (k > kMaxTopLogprobs) {
    st = RowStatus::kInvalidParams;
  } else if (row_nan != 0) {
    st = RowStatus::kNanLogits;
  } else if (rm == kNegInf) {
    st = RowStatus::kNoViableToken;
  } else if (rm == kPosInf) {
    st = RowStatus::kNonFiniteLogits;
  }
  if (st != RowStatus::kOk || k == 0) {
    if (tid == 0) {
      a.out.count[row] = 0;
      a.out.status[row] = static_cast<std::int32_t>(st);
      a.out.chosen_logprob[row] = 0.0f;
      a.counters[row] = 0;
    }
    return;
  }
  const double lse = static_cast<double>(rm) + log(total);

  // The best of every part's list: warps take parts in turn, then fold.
  WarpList all;
  const int warp = tid >> 5;
  for (int p = warp; p < a.splits; p += kLpWarps) {
    const float qv = lane < kLpList ? __ldcg(&parts[p].v[lane]) : kNegInf;
    const std::int32_t qi = lane < kLpList ? __ldcg(&parts[p].id[lane]) : INT32_MAX;
    all.offer(qv, qi, lane);
  }
  merge_warp_lists(all, sm.lv, sm.li);
  if (tid < 32) {
    const bool listed = lane < static_cast<int>(k) && all.v > kNegInf;
    if (listed) {
      a.out.ids[row * kMaxTopLogprobs + lane] = all.id;
      a.out.logprobs[row * kMaxTopLogprobs + lane] =
          static_cast<float>(static_cast<double>(all.v) - lse);
    }
    const int n = __popc(__ballot_sync(0xffffffffU, listed));
    if (lane == 0) {
      a.out.count[row] = n;
      a.out.status[row] = 0;
      const std::int32_t ch = a.chosen[row];
      float cl = 0.0f;
      if (ch >= 0 && ch < a.vocab) {
        const float xv = load_elem(x, ch);
        cl = static_cast<float>(static_cast<double>(xv) - lse);
      }
      a.out.chosen_logprob[row] = cl;
      a.counters[row] = 0;  // ready for the next launch (and graph replay)
    }
  }
}

}  // namespace nextok::cuda::dev
