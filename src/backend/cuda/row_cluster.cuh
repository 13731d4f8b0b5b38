// One row per thread-block cluster. Block r of the cluster owns ids
// [r*L, (r+1)*L) and keeps them in shared memory, so after the single read
// from global memory every pass (radix select, scans, the draw) runs on
// shared memory. Cross-block results move through distributed shared memory.
//
// Inside a block, thread t owns the contiguous chunk [t*P, (t+1)*P) of the
// slice; P is odd, so a warp walking its chunks hits 32 distinct banks.
#pragma once

#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "backend/cuda/device_math.cuh"

namespace nextok::cuda::dev {

namespace cg = cooperative_groups;

constexpr int kRowThreads = 1024;
constexpr int kMaxBuckets = 2048;
constexpr int kSlots = 32;
constexpr unsigned kFull = 0xffffffffU;

// A cross-block message: one per phase, never reused within a launch.
struct Slot {
  double d0, d1;
  std::int32_t i0, i1;
  float f0;
};

// The shared memory of a row block, after the static CUB storage.
struct RowSmem {
  std::uint32_t local_cnt[2][kMaxBuckets];
  unsigned long long local_sum[2][kMaxBuckets];
  std::uint32_t g_cnt[kMaxBuckets];
  double g_w[kMaxBuckets];
  float slice[1];  // [cap]
};
constexpr std::size_t kRowSmemFixed = offsetof(RowSmem, slice);
static_assert(kRowSmemFixed % 16 == 0, "the slice takes 16-byte stores");

// Warp-scan block scans of doubles: their storage is 32 values, not one per
// thread as in CUB's default raking scan (8 KB), which leaves room for a
// larger slice. Int scans: RowCtx::block_exclusive_sum.
using BlockScanD = cub::BlockScan<double, kRowThreads, cub::BLOCK_SCAN_WARP_SCANS>;
static_assert(kRowThreads == 32 * 32, "block folds take one value per warp, 32 warps");

struct BlockStorage {
  union {
    cub::BlockReduce<double, kRowThreads>::TempStorage rd;
    cub::BlockReduce<ArgMax, kRowThreads>::TempStorage ra;
    cub::BlockReduce<int, kRowThreads>::TempStorage ri;
    BlockScanD::TempStorage sd;
  } cub;
  Slot slots[kSlots];
  Slot got[2][16];  // this block's copy of every rank's post (phase parity)
  double bcast_d;
  std::int32_t bcast_i[2];
  int warp_i[32];  // block_exclusive_sum's warp totals
  int hist_buf;
  // The one-row kernel's mbarrier in rank 0: the fast path's gather (every
  // thread of rank 0 arrives; the other blocks' candidate bytes count).
  unsigned long long gather_bar;
};

// The element view a pass works on: active or not, its 32-bit order key and,
// for mass passes, the 24-bit significand of the (positive float) key.
struct Elem {
  bool active;
  std::uint32_t key;
};

// Inclusive prefix sum over the 32 lanes of a warp (lane order).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
  const int lane = static_cast<int>(threadIdx.x & 31);
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const T t = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += t;
  }
  return v;
}

// The warp's argmax (better()'s order) in lane 0.
__device__ __forceinline__ ArgMax warp_argmax(ArgMax am) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    am = better(am, {__shfl_down_sync(kFull, am.value, o), __shfl_down_sync(kFull, am.index, o)});
  return am;
}

// Hopper cluster primitives by PTX (sm_90). An address in this block's
// shared memory as the 32-bit shared::cta address, and the same place in
// block `rank` of the cluster (shared::cluster).
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ std::uint32_t cluster_addr(std::uint32_t a, int rank) {
  std::uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
// A 4-byte store into (another) block's shared memory whose bytes count on
// that block's mbarrier `bar` (both shared::cluster addresses): no fence,
// no cluster barrier; the receiver waits on its mbarrier.
__device__ __forceinline__ void st_async(std::uint32_t addr, std::uint32_t v, std::uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
               :
               : "r"(addr), "r"(v), "r"(bar)
               : "memory");
}
// mbarrier (shared::cta address) with `count` arrivals a phase; the fence
// makes the initialisation visible to the cluster at its next cluster
// barrier.
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// An arrival (release: this thread's shared-memory stores before it are
// visible to whoever waits for the phase).
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("{\n .reg .b64 s;\n mbarrier.arrive.shared::cta.b64 s, [%0];\n}" ::"r"(bar)
               : "memory");
}
// An arrival that also expects `bytes` of st_async stores in the phase.
__device__ __forceinline__ void mbar_arrive_expect(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile(
      "{\n .reg .b64 s;\n mbarrier.arrive.expect_tx.shared::cta.b64 s, [%0], %1;\n}" ::"r"(bar),
      "r"(bytes)
      : "memory");
}
// Whether the phase of parity `parity` has completed (acquire, cluster
// scope: the st_async data is visible after it returns true).
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], "
      "%2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0U;
}
// The two halves of a cluster barrier: arrive without ordering memory, and
// wait (acquire). A thread waits before it arrives again or uses cg's sync.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait;" ::: "memory");
}

// The block's argmax in lane 0 of warp 0: warp shuffles, one block
// barrier, then warp 0 folds the 32 warp results through wv / wi (32
// entries each; better() is associative and commutative, so any order
// gives the same pair). With `flag`, also the OR of every thread's *flag
// into lane 0 of warp 0 (wi[32 .. 63] holds the warps' flags).
__device__ __forceinline__ ArgMax block_argmax_warp0(ArgMax am, float* wv, std::int32_t* wi,
                                                     int* flag = nullptr) {
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  am = warp_argmax(am);
  const int f =
      flag != nullptr ? static_cast<int>(__reduce_or_sync(kFull, static_cast<unsigned>(*flag))) : 0;
  if (lane == 0) {
    wv[warp] = am.value;
    wi[warp] = am.index;
    if (flag != nullptr) wi[32 + warp] = f;
  }
  __syncthreads();
  if (warp == 0) {
    am = warp_argmax(ArgMax{wv[lane], wi[lane]});
    if (flag != nullptr)
      *flag = static_cast<int>(__reduce_or_sync(kFull, static_cast<unsigned>(wi[32 + lane])));
  }
  return am;
}

struct MaxOp {
  __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};

// Ids of this block's slice that exist: [base, base + n) with n in [0, L].
__device__ __forceinline__ int local_count(std::int64_t vocab, std::int64_t base, int slice_len) {
  const std::int64_t n = vocab - base;
  return n <= 0 ? 0 : (n < slice_len ? static_cast<int>(n) : slice_len);
}

struct RowCtx {
  cg::cluster_group cl;
  int rank, csize, P;
  std::int64_t base;  // first id of this block's slice
  RowSmem* sm;
  BlockStorage* bs;
  int phase;

  __device__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ int cap() const { return P * kRowThreads; }
  // Every rank's post of phase ph, read from this block's copy. Valid until
  // the exchange after next.
  __device__ const Slot& peer(int r, int ph) const { return bs->got[ph & 1][r]; }

  // Thread 0 posts `mine`; after the cluster barrier thread r copies rank
  // r's post into this block, so every thread may read every block's post
  // for this phase. (Each thread reading all ranks' posts over DSMEM costs
  // csize * 1024 remote loads per block: ~6 us at csize 16.) Returns the
  // phase index.
  __device__ int exchange(const Slot& mine) {
    const int ph = phase++;
    if (tid() == 0) bs->slots[ph] = mine;
    cl.sync();
    if (tid() < csize) bs->got[ph & 1][tid()] = *cl.map_shared_rank(&bs->slots[ph], tid());
    __syncthreads();
    return ph;
  }

  // The max exchange: tid 0 posts its block's argmax and NaN flag; after
  // the cluster barrier warp 0 alone reads the posts (lane r: rank r's, over
  // DSMEM) and folds them (better() is associative and commutative), then
  // one block barrier broadcasts the row's argmax. Every thread folding
  // every post itself cost ~200 instructions a thread at csize 16.
  __device__ ArgMax exchange_argmax(ArgMax mine, int nan, int& any_nan) {
    const int ph = phase++;
    if (tid() == 0) bs->slots[ph] = Slot{mine.value, 0, mine.index, nan, 0};
    cl.sync();
    if (tid() < 32) {
      ArgMax a{kNegInf, INT32_MAX};
      int n = 0;
      if (tid() < csize) {
        const Slot& q = *cl.map_shared_rank(&bs->slots[ph], tid());
        a = ArgMax{static_cast<float>(q.d0), q.i0};
        n = q.i1;
      }
      a = warp_argmax(a);
      n = static_cast<int>(__reduce_or_sync(kFull, static_cast<unsigned>(n)));
      if (tid() == 0) {
        bs->bcast_d = a.value;
        bs->bcast_i[0] = a.index;
        bs->bcast_i[1] = n;
      }
    }
    __syncthreads();
    any_nan = bs->bcast_i[1];
    return ArgMax{static_cast<float>(bs->bcast_d), bs->bcast_i[0]};
  }

  __device__ double block_sum(double v) {
    const double r = cub::BlockReduce<double, kRowThreads>(bs->cub.rd).Sum(v);
    if (tid() == 0) bs->bcast_d = r;
    __syncthreads();
    const double out = bs->bcast_d;
    __syncthreads();
    return out;
  }
  __device__ int block_sum_i(int v) {
    const int r = cub::BlockReduce<int, kRowThreads>(bs->cub.ri).Sum(v);
    if (tid() == 0) bs->bcast_i[0] = r;
    __syncthreads();
    const int out = bs->bcast_i[0];
    __syncthreads();
    return out;
  }
  __device__ int block_max_i(int v) {
    const int r = cub::BlockReduce<int, kRowThreads>(bs->cub.ri).Reduce(v, MaxOp{});
    if (tid() == 0) bs->bcast_i[0] = r;
    __syncthreads();
    const int out = bs->bcast_i[0];
    __syncthreads();
    return out;
  }
  __device__ ArgMax block_argmax(ArgMax v) {
    const ArgMax r = cub::BlockReduce<ArgMax, kRowThreads>(bs->cub.ra).Reduce(v, ArgMaxOp{});
    if (tid() == 0) {
      bs->bcast_d = r.value;
      bs->bcast_i[0] = r.index;
    }
    __syncthreads();
    const ArgMax out{static_cast<float>(bs->bcast_d), bs->bcast_i[0]};
    __syncthreads();
    return out;
  }
  __device__ int block_or(int v) { return __syncthreads_or(v); }
  // Exclusive prefix sum of v over the block in thread order, and the block
  // total: warp shuffle scans and one fold of the 32 warp totals (cheaper
  // than a CUB warp-scans block scan, which walks the totals per thread).
  __device__ int block_exclusive_sum(int v, int& total) {
    const int lane = tid() & 31, warp = tid() >> 5;
    const int inc = warp_inclusive_sum(v);
    if (lane == 31) bs->warp_i[warp] = inc;
    __syncthreads();
    const int w = bs->warp_i[lane], w_inc = warp_inclusive_sum(w);
    const int before = __shfl_sync(kFull, w_inc - w, warp);
    total = __shfl_sync(kFull, w_inc, 31);
    __syncthreads();  // warp_i may be reused by the next call
    return before + inc - v;
  }
};

// 24-bit significand of a positive float's bits and the power of two that
// scales it: value = sig * 2^(scale_exp). Exact as an integer.
__device__ __forceinline__ std::uint32_t significand(std::uint32_t k) {
  const std::uint32_t e = (k >> 23) & 0xFFU;
  return e != 0 ? ((k & 0x7FFFFFU) | 0x800000U) : (k & 0x7FFFFFU);
}
__device__ __forceinline__ int scale_exp(std::uint32_t k) {
  const int e = static_cast<int>((k >> 23) & 0xFFU);
  return (e != 0 ? e : 1) - 150;
}

struct Boundary {
  bool found;
  std::uint32_t key;  // the boundary key v
  double above;       // weight of keys > v
  double total;       // weight of every active element (first pass)
  std::uint32_t tie;  // number of active elements with key == v
};

// Radix select over the cluster's row: v with W(key > v) < target <=
// W(key >= v), W a count or (by_mass: keys are positive float bits) a mass
// summed exactly per bucket as integers. `target_of(total)` turns the first
// pass's total weight into the target. Digits 11/11/10 as on the host.
template <typename ElemFn, typename TargetFn>
__device__ Boundary radix_select(RowCtx& c, ElemFn elem, bool by_mass, TargetFn target_of) {
  constexpr int kShift[3] = {21, 10, 0};
  constexpr int kNb[3] = {2048, 2048, 1024};
  Boundary b{false, 0, 0.0, 0.0, 0};
  std::uint32_t prefix = 0, hi_mask = 0;
  double target = 0.0;
  const int lane = c.tid() & 31;
  for (int pass = 0; pass < 3; ++pass) {
    const int shift = kShift[pass], nb = kNb[pass];
    const int buf = c.bs->hist_buf;
    std::uint32_t* cnt = c.sm->local_cnt[buf];
    unsigned long long* sum = c.sm->local_sum[buf];
    for (int i = c.tid(); i < nb; i += kRowThreads) {
      cnt[i] = 0;
      sum[i] = 0;
    }
    __syncthreads();
    const int x0 = c.tid() * c.P;
    for (int j = 0; j < c.P; ++j) {
      const int x = x0 + j;
      const Elem e = elem(x, c.base + x);
      const bool act = e.active && (e.key & hi_mask) == prefix;
      const unsigned ballot = __ballot_sync(kFull, act);
      if (act) {
        const unsigned bucket = (e.key >> shift) & static_cast<unsigned>(nb - 1);
        const unsigned peers = __match_any_sync(ballot, bucket);
        const unsigned s = by_mass ? __reduce_add_sync(peers, significand(e.key)) : 0U;
        if (lane == __ffs(peers) - 1) {
          atomicAdd(&cnt[bucket], static_cast<unsigned>(__popc(peers)));
          if (by_mass) atomicAdd(&sum[bucket], static_cast<unsigned long long>(s));
        }
      }
    }
    __syncthreads();
    c.cl.sync();
    // Merge every block's histogram (rank order) into this block's g_*.
    double my_w = 0.0;
    for (int i = c.tid(); i < nb; i += kRowThreads) {
      std::uint32_t n = 0;
      unsigned long long s = 0;
      for (int r = 0; r < c.csize; ++r) {
        n += c.cl.map_shared_rank(cnt, r)[i];
        if (by_mass) s += c.cl.map_shared_rank(sum, r)[i];
      }
      c.sm->g_cnt[i] = n;
      const std::uint32_t k = prefix | (static_cast<std::uint32_t>(i) << shift);
      const double w = by_mass ? ldexp(static_cast<double>(s), scale_exp(k)) : n;
      c.sm->g_w[i] = w;
      my_w += w;
    }
    if (c.tid() == 0) c.bs->hist_buf = buf ^ 1;
    __syncthreads();
    if (pass == 0) {
      b.total = c.block_sum(my_w);
      target = target_of(b.total);
    }
    // Buckets from the top down: thread t takes the t-th group of q.
    const int q = nb / kRowThreads;
    double w_t = 0.0;
    for (int u = 0; u < q; ++u) w_t += c.sm->g_w[nb - 1 - (c.tid() * q + u)];
    double above_t = 0.0;
    BlockScanD(c.bs->cub.sd).ExclusiveSum(w_t, above_t);
    if (c.tid() == 0) c.bs->bcast_i[1] = -1;
    __syncthreads();
    double above = b.above + above_t;
    int chosen = -1;
    for (int u = 0; u < q; ++u) {
      const int k = nb - 1 - (c.tid() * q + u);
      const double w = c.sm->g_w[k];
      if (above < target && above + w >= target) {
        chosen = k;
        break;
      }
      above += w;
    }
    // Rounding could let two threads claim; the highest bucket wins.
    if (chosen >= 0) atomicMax(&c.bs->bcast_i[1], chosen);
    __syncthreads();
    const int win = c.bs->bcast_i[1];
    if (win < 0) {
      __syncthreads();
      return b;  // target never reached: everything survives
    }
    if (chosen == win) c.bs->bcast_d = above;
    __syncthreads();
    b.above = c.bs->bcast_d;
    b.tie = c.sm->g_cnt[win];
    __syncthreads();
    prefix |= static_cast<std::uint32_t>(win) << shift;
    hi_mask |= static_cast<std::uint32_t>(nb - 1) << shift;
  }
  b.found = true;
  b.key = prefix;
  return b;
}

// The id of the element of ascending id-rank `rank` among those with
// pred(x, id) true across the cluster; INT32_MAX if there are not that many.
template <typename Pred>
__device__ std::int32_t id_at_rank(RowCtx& c, Pred pred, std::int64_t rank) {
  const int x0 = c.tid() * c.P;
  int n = 0;
  for (int j = 0; j < c.P; ++j) n += pred(x0 + j, c.base + x0 + j) ? 1 : 0;
  int pre = 0, block_total = 0;
  pre = c.block_exclusive_sum(n, block_total);
  const int ph = c.exchange(Slot{0, 0, block_total, 0, 0});
  std::int64_t before = 0;
  for (int r = 0; r < c.rank; ++r) before += c.peer(r, ph).i0;
  if (c.tid() == 0) c.bs->bcast_i[0] = INT32_MAX;
  __syncthreads();
  const std::int64_t lo = before + pre;
  if (rank >= lo && rank < lo + n) {
    std::int64_t left = rank - lo;
    for (int j = 0; j < c.P; ++j) {
      if (pred(x0 + j, c.base + x0 + j) && left-- == 0) {
        c.bs->bcast_i[0] = static_cast<std::int32_t>(c.base + x0 + j);
        break;
      }
    }
  }
  __syncthreads();
  const int ph2 = c.exchange(Slot{0, 0, c.bs->bcast_i[0], 0, 0});
  std::int32_t id = INT32_MAX;
  for (int r = 0; r < c.csize; ++r) id = min(id, c.peer(r, ph2).i0);
  return id;
}

}  // namespace nextok::cuda::dev
