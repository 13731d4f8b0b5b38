// The last stages of a candidate path, run by one block over a candidate
// set that provably holds every survivor: rank the candidates in both tie
// orders, apply the filters in the row's order, draw in id order.
#pragma once

#include "backend/cuda/tail.cuh"

namespace nextok::cuda::dev {

constexpr int kCandCap = 2 * kRowThreads;

// N candidates: in_key / in_id as gathered (bits of the weight e, the id).
// With kIdOrdered the input is already in id order and is used in place;
// otherwise each candidate's id rank is counted with its other ranks and
// the set is copied into key / ids in id order. ord_p, ord_k and flag are
// scratch of N entries each.
struct Candidates {
  const std::uint32_t* in_key;
  const std::int32_t* in_id;
  int N;
  std::uint32_t* key;
  std::int32_t* ids;
  std::uint32_t* ord_p;
  std::uint32_t* ord_k;
  std::uint32_t* flag;
};

// Which path counters a drawn row adds to: the path, and its one-warp tail.
struct TailPaths {
  int path, warp_tail;
};

// The ranks of every candidate in (e desc, id asc) -> ord_k and (e desc,
// id desc) -> ord_p, as indexes into the id-ordered set. grp threads per
// candidate (a power of two <= 32, as many as fit in the block): each
// counts over every grp-th other candidate, then the partial counts are
// summed with xor shuffles inside the group. The sweep loop is
// block-uniform; warps without a candidate in a sweep skip it.
template <bool kIdOrdered>
__device__ __forceinline__ void rank_candidates(Candidates cs) {
  const int N = cs.N;
  const int tid = static_cast<int>(threadIdx.x), warp = tid >> 5;
  int grp = 1;
  while (grp < 32 && N * (2 * grp) <= kRowThreads) grp *= 2;
  const int gi = tid / grp, gl = tid % grp, per = kRowThreads / grp;
  for (int i0 = 0; i0 < N; i0 += per) {
    if (i0 + (warp * 32) / grp >= N) continue;  // warp-uniform
    const int i = i0 + gi;
    const bool act = i < N;
    const std::uint32_t ki = act ? cs.in_key[i] : 0U;
    const std::int32_t di = act ? cs.in_id[i] : 0;
    int gt = 0, eq = 0, lo = 0, below = 0;
    if (act) {
#pragma unroll 4
      for (int j = gl; j < N; j += grp) {
        const std::uint32_t kj = cs.in_key[j];
        const bool lower = kIdOrdered ? j < i : cs.in_id[j] < di;
        gt += kj > ki ? 1 : 0;
        eq += kj == ki ? 1 : 0;
        lo += (kj == ki && lower) ? 1 : 0;
        if constexpr (!kIdOrdered) below += lower ? 1 : 0;
      }
    }
    for (int o = 1; o < grp; o <<= 1) {
      gt += __shfl_xor_sync(kFull, gt, o);
      eq += __shfl_xor_sync(kFull, eq, o);
      lo += __shfl_xor_sync(kFull, lo, o);
      if constexpr (!kIdOrdered) below += __shfl_xor_sync(kFull, below, o);
    }
    if (act && gl == 0) {
      const int at = kIdOrdered ? i : below;  // index in id order
      cs.ord_k[gt + lo] = static_cast<std::uint32_t>(at);
      cs.ord_p[gt + (eq - 1 - lo)] = static_cast<std::uint32_t>(at);
      if constexpr (!kIdOrdered) {
        cs.key[at] = ki;
        cs.ids[at] = di;
      }
    }
  }
  __syncthreads();
}

// Ranking, filters (spec: top-p against `limit`, min-p, top-k; KFirst:
// top-k, top-p against top_p times the top-k set's mass, min-p) and the
// draw in id order. A spec limit known only within [limit, limit_hi) may
// leave the cut undecided: then it returns false (every thread) before the
// draw, as warp_tail does; true once drawn. Up to kWarpTailMax candidates warp 0 alone runs the
// filters and the draw (warp scans, no block barrier); above, the block
// (thread t holds ranks / indexes 2t and 2t + 1). Every thread of the block
// calls it.
template <bool KFirst, bool kIdOrdered, typename Out>
__device__ __forceinline__ bool rank_filter_draw(RowCtx& c, const RowParams& p, Candidates cs,
                                                 double limit, double limit_hi, std::int64_t vocab,
                                                 int row, RngState* rng, const Out& out,
                                                 TailPaths paths, bool st) {
  const auto [top_p, min_p, top_k] = active_filters(p, vocab);
  const int tid = c.tid(), warp = tid >> 5, N = cs.N;
  // The row's generator, loaded before the ranking so that its global
  // latency overlaps it (the tails need it last).
  RngState* g = rng + row;
  const RngState gen = *g;
  rank_candidates<kIdOrdered>(cs);
  const std::uint32_t* key = kIdOrdered ? cs.in_key : cs.key;
  const std::int32_t* ids = kIdOrdered ? cs.in_id : cs.ids;
  const std::uint32_t* ord_p = cs.ord_p;
  const std::uint32_t* ord_k = cs.ord_k;
  std::uint32_t* flag = cs.flag;
  stamp_at(st, 9);
  if (N <= kWarpTailMax) {
    bool drawn = true;
    if (warp == 0)
      drawn = warp_tail(p, N, key, ids, ord_p, ord_k, flag, limit, limit_hi, top_p, min_p, top_k,
                        KFirst, vocab, row, g, gen, out, paths.path, paths.warp_tail);
    stamp_at(st, 10);
    stamp_at(st, 11);
    // Only a bounded limit can leave the cut open (block-uniform).
    if (!KFirst && limit_hi > limit) return __syncthreads_and(drawn ? 1 : 0) != 0;
    return true;
  }
  auto weight = [&](std::uint32_t i) { return static_cast<double>(__uint_as_float(key[i])); };
  const int a = 2 * tid, b = 2 * tid + 1;
  if constexpr (KFirst) {
    // Top-k: the first k in (e desc, id asc) order.
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
    if (b < N) flag[ord_p[b]] = (kb && (!top_p || ex + va < lim) && (!min_p || vb >= mp)) ? 1U : 0U;
    __syncthreads();
  } else {
    // Top-p in (e desc, id desc) order: keep while the mass before < limit.
    {
      const double va = a < N ? weight(ord_p[a]) : 0.0;
      const double vb = b < N ? weight(ord_p[b]) : 0.0;
      double ex = 0.0;
      BlockScanD(c.bs->cub.sd).ExclusiveSum(va + vb, ex);
      if (a < N) flag[ord_p[a]] = (!top_p || ex < limit) ? 1U : 0U;
      if (b < N) flag[ord_p[b]] = (!top_p || ex + va < limit) ? 1U : 0U;
      const bool open = top_p && ((a < N && ex >= limit && ex < limit_hi) ||
                                  (b < N && ex + va >= limit && ex + va < limit_hi));
      if (__syncthreads_or(open ? 1 : 0) != 0) return false;
    }
    // Min-p, then top-k in (e desc, id asc) order among the survivors.
    {
      auto s1 = [&](int r) {
        if (r >= N) return 0;
        const std::uint32_t i = ord_k[r];
        return (flag[i] != 0U && (!min_p || __uint_as_float(key[i]) >= p.min_p)) ? 1 : 0;
      };
      const int fa = s1(a), fb = s1(b);
      int all_f = 0;
      const int ex = c.block_exclusive_sum(fa + fb, all_f);
      __syncthreads();
      if (a < N) flag[ord_k[a]] = (fa != 0 && (!top_k || ex < p.top_k)) ? 1U : 0U;
      if (b < N) flag[ord_k[b]] = (fb != 0 && (!top_k || ex + fa < p.top_k)) ? 1U : 0U;
    }
    __syncthreads();
  }
  stamp_at(st, 10);
  // Draw in id order.
  const bool sa = a < N && flag[a] != 0U, sb = b < N && flag[b] != 0U;
  const double va = sa ? weight(static_cast<std::uint32_t>(a)) : 0.0;
  const double vb = sb ? weight(static_cast<std::uint32_t>(b)) : 0.0;
  double lo = 0.0, S = 0.0;
  BlockScanD(c.bs->cub.sd).ExclusiveSum(va + vb, lo, S);
  __syncthreads();
  const int last = c.block_max_i(sb ? b : (sa ? a : -1));
  const float u = pcg_uniform(gen.state);
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
    commit_draw(out, row, pick >= 0 ? ids[pick] : -1, g, gen, paths.path);
  stamp_at(st, 11);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
    if (a < N) pr[ids[a]] = sa ? static_cast<float>(va / S) : 0.0f;
    if (b < N) pr[ids[b]] = sb ? static_cast<float>(vb / S) : 0.0f;
  }
  return true;
}

}  // namespace nextok::cuda::dev
