// The fast path of stages 6-11: a ladder pass, the cluster's level table,
// the candidate gather into rank 0, ranking and the tail.
#pragma once

#include <type_traits>

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
// one_row: the one-row kernel, whose rank 0 has initialised its gather
// mbarrier (BlockStorage::gather_bar, kRowThreads arrivals) before the
// row's first cluster barrier.
template <bool KFirst, typename Out>
__device__ bool fast_pipeline(RowCtx& c, const RowParams& p, std::int64_t vocab, int n_local,
                              int row, RngState* rng, const Out& out, bool st, float inv_t,
                              float shift, bool one_row) {
  float* s = c.sm->slice;
  const int tid = c.tid(), warp = tid >> 5;
  // Per-warp level counts and masses, [level][warp] with a row stride of 33
  // (conflict-free by level and by warp), then the (rank, level) table at
  // rcnt, [level][rank] with a row stride of 17, then the cluster's totals
  // per level (lcnt, lmass). The per-warp counts survive the level table:
  // the gather's offsets come from them.
  constexpr int kWs = 33, kRs = 17;
  auto* wcnt = reinterpret_cast<std::uint32_t*>(c.sm->local_sum[0]);
  auto* wmass = reinterpret_cast<unsigned long long*>(c.sm->local_sum[1]);
  std::uint32_t* rcnt = wcnt + kLevels * kWs;
  std::uint32_t* lcnt = rcnt + kLevels * kRs;
  unsigned long long* lmass = wmass + kLevels * kWs;
  std::uint32_t* bcnt = c.sm->g_cnt;                               // [16]
  auto* bmass = reinterpret_cast<unsigned long long*>(c.sm->g_w);  // [16]
  const int x0 = tid * c.P;
  const int lane = tid & 31;
  const auto [top_p, min_p, top_k] = active_filters(p, vocab);
  double mine = 0.0;
  // Stage 6 fused with the ladder binning: e = exp(w/T - m/T) in place and,
  // with e still in a register, its level (from the exponent) and exact
  // mass. Per thread: the counts per level packed in registers and, for
  // top-p, one 32-bit scaled mass per level in a private shared-memory
  // column bin[l][tid] (conflict-free: 1024 is a multiple of the 32 banks).
  // The 16 bins are contiguous from local_cnt (through local_sum, g_cnt and
  // the start of g_w: one address multiply an id); all are dead before the
  // warp results are stored. Then warp reductions. Same integers, same
  // decision as 16 compares per id.
  static_assert(offsetof(RowSmem, g_w) + sizeof(RowSmem::g_w) >=
                    kLevels * kRowThreads * sizeof(std::uint32_t),
                "bins 0-15 from local_cnt");
  std::uint32_t* bins = &c.sm->local_cnt[0][0] + tid;
  auto bin = [&](int l) -> std::uint32_t& { return bins[l * kRowThreads]; };
  const bool masses = !KFirst && top_p;
  if (masses) {
#pragma unroll
    for (int l = 0; l < kLevels; ++l) bin(l) = 0;
  }
  // Counts: with at most 15 ids a thread (B = 1 at V 151936: 11), 4-bit
  // fields in two words (levels 0-7, 8-15; shl.b32 by 32 or more gives 0,
  // so level 16 and the other word add nothing): ~5 instructions an id;
  // spread to the 8-bit layout (four words) after the pass. Else 8-bit
  // fields in four words directly (~18 instructions an id).
  std::uint32_t cp0 = 0, cp1 = 0, cp2 = 0, cp3 = 0, nib_lo = 0, nib_hi = 0;
  const bool nib = c.P <= 15;
  auto count = [&](auto kNib, int lvl) {
    if constexpr (decltype(kNib)::value) {
      const std::uint32_t sh = 4U * static_cast<std::uint32_t>(lvl);
      nib_lo += shl_clamped(1U, sh);
      nib_hi += shl_clamped(1U, sh - 32U);
    } else {
      const std::uint32_t inc = lvl < kLevels ? 1U << ((lvl & 3) * 8) : 0U;
      const int w = lvl >> 2;
      cp0 += w == 0 ? inc : 0U;
      cp1 += w == 1 ? inc : 0U;
      cp2 += w == 2 ? inc : 0U;
      cp3 += w == 3 ? inc : 0U;
    }
  };
  auto settle = [&] {
    if (!nib) return;
    // Nibbles n0..n3 of a 16-bit field -> bytes.
    auto spread = [](std::uint32_t x) {
      x = (x & 0x00FFU) | ((x & 0xFF00U) << 8);
      return (x & 0x000F000FU) | ((x & 0x00F000F0U) << 4);
    };
    cp0 = spread(nib_lo & 0xFFFFU);
    cp1 = spread(nib_lo >> 16);
    cp2 = spread(nib_hi & 0xFFFFU);
    cp3 = spread(nib_hi >> 16);
    nib_lo = nib_hi = 0;
  };
  // The exp argument, rounded as every pass rounds it.
  auto arg = [&](int xi) { return s[xi] * inv_t - shift; };
  // top_k_first: counts only, levels on the exp argument.
  auto rel_pass = [&](std::uint32_t lo, int sh) {
    auto run = [&](auto kNib) {
      for (int j = 0; j < c.P; ++j) count(kNib, ladder_rel(arg(x0 + j), lo, sh));
    };
    if (nib) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
    settle();
  };
  if constexpr (KFirst) {
    rel_pass(kKfirstLo, kCoarseShift);
  } else {
    // Branch-free body: e == 0 adds 0.0 to the sum and has level 16 (no
    // count, no mass).
    const uint2* lut = ladder_lut_of(c.sm);  // built at the row's start (pipeline_row)
    auto run = [&](auto kNib) {
      for (int j = 0; j < c.P; ++j) {
        const int xi = x0 + j;                    // the thread's own chunk: n below needs it
        const float e = exp_f32_nonpos(arg(xi));  // arg <= 0: w <= m
        s[xi] = e;
        mine += static_cast<double>(e);
        std::uint32_t v = 0;
        const int lvl = ladder_bin(e, lut, v);
        count(kNib, lvl);
        if (top_p && lvl < kLevels) bin(lvl) += v;
      }
    };
    if (nib) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
    settle();
  }
  stamp_at(st, 4);
  // The cluster's per-level counts (and masses) from the packed per-thread
  // counts: warp reductions (lane l of each warp keeps level l; lane 0 the
  // warp's double sum of e, summed by warp 0 in a fixed order: S), the block
  // fold into `bc` (and bmass), one exchange, then every (rank, level) count
  // in one parallel round of DSMEM loads, summed per level. Warp 0 scans the levels
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
      wcnt[lane * kWs + warp] = my_cnt;
      wmass[lane * kWs + warp] = my_mass;
    }
    if (lane == 0) wsum[warp] = ws;
    __syncthreads();
    stamp_at(st, 5);
    if (tid < kLevels) {
      std::uint32_t n = 0;
      unsigned long long m = 0;
      for (int w = 0; w < kRowThreads / 32; ++w) {
        n += wcnt[tid * kWs + w];
        m += wmass[tid * kWs + w];
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
    stamp_at(st, 6);
    block_stamp(st, 3);
    // Thread l * csize + r loads rank r's count (and mass) of level l; the
    // csize lanes of a level (a power of two: one warp holds whole levels)
    // sum them with xor shuffles (integers: any order), so warp 0 reads one
    // total per level instead of walking csize ranks per level.
    if (tid < max(32, kLevels * c.csize)) {
      const int l = tid / c.csize, r = tid % c.csize;
      std::uint32_t n = 0;
      unsigned long long m = 0;
      if (l < kLevels) {
        n = c.cl.map_shared_rank(bc, r)[l];
        rcnt[l * kRs + r] = n;  // for the gather's offsets
        if (masses) m = c.cl.map_shared_rank(bmass, r)[l];
      }
      for (int o = 1; o < c.csize; o <<= 1) {
        n += __shfl_xor_sync(kFull, n, o);
        if (masses) m += __shfl_xor_sync(kFull, m, o);
      }
      if (l < kLevels && r == 0) {
        lcnt[l] = n;
        lmass[l] = m;
      }
    }
    __syncthreads();
    if (warp == 0) {
      // S in rank order (the same double sum as before); warp 0 alone needs
      // it here and broadcasts the limit with the level.
      double total = 0.0;
      for (int r = 0; r < c.csize; ++r) total += c.peer(r, ph).d0;
      limit = static_cast<double>(p.top_p) * total;
      std::int64_t cnt = lane < kLevels ? lcnt[lane] : 0;
      unsigned long long mass = lane < kLevels ? lmass[lane] : 0ULL;
      for (int o = 1; o < 32; o <<= 1) {
        const std::int64_t nc = __shfl_up_sync(kFull, cnt, o);
        const unsigned long long nm = __shfl_up_sync(kFull, mass, o);
        if (lane >= o) {
          cnt += nc;
          mass += nm;
        }
      }
      const int lvl = decide(cnt, mass);
      if (lane == 0) {
        c.bs->bcast_i[1] = lvl;
        c.bs->bcast_d = limit;
      }
    }
    __syncthreads();
    const int out_level = c.bs->bcast_i[1];
    limit = c.bs->bcast_d;
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
    rel_pass(lo2, kFineShift);
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
  // This thread's place in the block: lane w sums warp w's counts of levels
  // <= level (the level table's per-warp counts, still in wcnt), a warp scan
  // gives the warp's offset, another the lanes': no block scan, no barrier.
  int wq = 0;
  for (int l = 0; l <= level; ++l) wq += static_cast<int>(wcnt[l * kWs + lane]);
  const int wq_inc = warp_inclusive_sum(wq);
  const int pre = __shfl_sync(kFull, wq_inc - wq, warp) + warp_inclusive_sum(n) - n;
  // Every rank's candidate count is already in the (rank, level) table
  // (rcnt, loaded above): no exchange. Lane r sums rank r's levels <= level.
  int q = 0;
  if (lane < c.csize)
    for (int l = 0; l <= level; ++l) q += static_cast<int>(rcnt[l * kRs + lane]);
  const int before = static_cast<int>(__reduce_add_sync(kFull, lane < c.rank ? q : 0));
  const int N = static_cast<int>(__reduce_add_sync(kFull, q));
  int pos = before + pre;
  if (one_row) {
    // The other blocks st.async their candidates into rank 0, each 4-byte
    // store counted on rank 0's mbarrier; rank 0 stores its own and every
    // thread of it arrives there, then waits for the phase: no cluster
    // barrier (whose release is a GPU-scope fence) before the ranking. The
    // blocks then arrive at a cluster barrier (relaxed: their reads of other
    // blocks' shared memory are done) and wait for it only at their end, so
    // none exits before rank 0 has every candidate.
    const std::uint32_t own = static_cast<std::uint32_t>(__shfl_sync(kFull, q, 0));
    const std::uint32_t bar = cluster_addr(smem_addr(&c.bs->gather_bar), 0);
    const std::uint32_t ckey = cluster_addr(smem_addr(c.sm->local_cnt[0]), 0);
    const std::uint32_t cid = cluster_addr(smem_addr(c.sm->local_cnt[1]), 0);
    for (int j = 0; j < c.P && n > 0; ++j) {
      if (candidate(x0 + j)) {
        const auto key = __float_as_uint(weight_of(x0 + j));
        const auto id = static_cast<std::uint32_t>(c.base + x0 + j);
        if (c.rank == 0) {
          c.sm->local_cnt[0][pos] = key;
          c.sm->local_cnt[1][pos] = id;
        } else {
          st_async(ckey + 4U * static_cast<std::uint32_t>(pos), key, bar);
          st_async(cid + 4U * static_cast<std::uint32_t>(pos), id, bar);
        }
        ++pos;
        --n;
      }
    }
    if (c.rank == 0) {
      const std::uint32_t here = smem_addr(&c.bs->gather_bar);
      if (tid == 0) {
        mbar_arrive_expect(here, 8U * (static_cast<std::uint32_t>(N) - own));
      } else {
        mbar_arrive(here);
      }
      while (!mbar_try_wait(here, 0U)) {
      }
    }
    cluster_arrive_relaxed();
  } else {
    std::uint32_t* ckey = c.cl.map_shared_rank(c.sm->local_cnt[0], 0);
    std::int32_t* cid =
        reinterpret_cast<std::int32_t*>(c.cl.map_shared_rank(c.sm->local_cnt[1], 0));
    for (int j = 0; j < c.P && n > 0; ++j) {
      if (candidate(x0 + j)) {
        ckey[pos] = __float_as_uint(weight_of(x0 + j));
        cid[pos] = static_cast<std::int32_t>(c.base + x0 + j);
        ++pos;
        --n;
      }
    }
    c.cl.sync();
  }
  stamp_at(st, 8);
  if (out.probs != nullptr) {
    float* pr = out.probs + row * vocab;
    for (int xi = tid; xi < n_local; xi += kRowThreads)
      if (!candidate(xi)) pr[c.base + xi] = 0.0f;
  }
  if (c.rank != 0) {
    if (one_row) cluster_wait();
    return true;
  }

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
  if (one_row) cluster_wait();
  return true;
}

}  // namespace nextok::cuda::dev
