// The fast path of stages 6-11: a ladder pass, the cluster's level table,
// the candidate gather into rank 0, ranking and the tail.
#pragma once

#include "backend/cuda/ladder.cuh"
#include "backend/cuda/rank_tail.cuh"

namespace nextok::cuda::dev {

// Fast path: a ladder finds a small candidate set that provably holds
// every survivor; the candidates are gathered (in id order) into rank 0's
// shared memory and rank 0 alone ranks them, filters them and draws.
// Returns false (every block alike) when no ladder level is both sufficient
// and small enough; the caller then runs the full radix path.
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
  const auto [top_p, min_p, top_k] = active_filters(p, vocab);
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
    for (int j = 0; j < c.P; ++j) count(ladder_rel(arg(x0 + j), kKfirstLo, kCoarseShift));
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
    lo2 = static_cast<std::uint32_t>(static_cast<int>(kKfirstLo) + (L - 1) * (1 << kCoarseShift));
    cp0 = cp1 = cp2 = cp3 = 0;
    for (int j = 0; j < c.P; ++j) count(ladder_rel(arg(x0 + j), lo2, kFineShift));
    level = level_table(bcnt + kLevels, [&](std::int64_t cnt, unsigned long long) {
      const unsigned bal = __ballot_sync(kFull, lane < kLevels && cnt >= p.top_k);
      const int J = bal != 0U ? __ffs(bal) - 1 : kLevels;
      const int G = J + 1;
      const std::int64_t cnt_g = __shfl_sync(kFull, cnt, min(G, 31));
      const bool ok =
          G < kLevels && cnt_g <= kCandCap &&
          exp_f32(-ladder_bound(lo2, kFineShift, J)) > exp_f32(-ladder_bound(lo2, kFineShift, G));
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
    if constexpr (KFirst) return ladder_rel(arg(xi), lo2, kFineShift) <= level;
    return s[xi] >= tau;
  };
  auto weight_of = [&](int xi) {
    if constexpr (KFirst) return exp_f32(arg(xi));
    return s[xi];
  };

  // Gather the candidates in id order into rank 0: key bits and ids.
  // n = this thread's candidates = its counts of levels <= level.
  auto low_bytes = [](std::uint32_t w, int nb) {
    const std::uint32_t m = nb >= 4 ? 0xFFFFFFFFU : (nb <= 0 ? 0U : (1U << (8 * nb)) - 1U);
    return static_cast<int>(__dp4a(w & m, 0x01010101U, 0U));
  };
  int n = low_bytes(cp0, level + 1) + low_bytes(cp1, level - 3) + low_bytes(cp2, level - 7) +
          low_bytes(cp3, level - 11);
  int all_n = 0;  // N below comes from the level table
  const int pre = c.block_exclusive_sum(n, all_n);
  // Every rank's candidate count is already in the (rank, level) table
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

  const Candidates cs{c.sm->local_cnt[0],
                      reinterpret_cast<const std::int32_t*>(c.sm->local_cnt[1]),
                      N,
                      nullptr,
                      nullptr,
                      c.sm->g_cnt,
                      reinterpret_cast<std::uint32_t*>(c.sm->local_sum[0]),
                      reinterpret_cast<std::uint32_t*>(c.sm->local_sum[1])};
  rank_filter_draw<KFirst, true>(c, p, cs, limit, limit, vocab, row, rng, out,
                                 KFirst ? TailPaths{kPathKfirstFast, kPathKfirstWarpTail}
                                        : TailPaths{kPathFast, kPathWarpTail},
                                 st);
  return true;
}

}  // namespace nextok::cuda::dev
