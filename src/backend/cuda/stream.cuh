// The streaming kernel for large batches: one block per row reads the row
// from global memory once and keeps each thread's four largest (logit, id)
// in registers; no slice of the row is kept. The kept values bound the
// top-k threshold from below, so when no thread holds more candidates than
// it kept, they are the candidate set (the spec order's top-p also reads the
// row a second time for its total mass). Ids whose logits bias or penalties
// change are skipped by the stream and added from a list. Rows it cannot
// decide (no top-k, no level, too many candidates or changed ids) go to the
// cluster kernel through a row list.
#pragma once

#include <type_traits>

#include "backend/cuda/ladder.cuh"
#include "backend/cuda/pipeline_args.cuh"
#include "backend/cuda/rank_tail.cuh"

namespace nextok::cuda::dev {

constexpr int kKeep = 4;
// Levels on the bits of d = -t (t the exp argument), 1/16 octaves from
// 2^-16: level i >= 1 holds 2^-16 * 2^((i-1)/16) <= d < 2^-16 * 2^(i/16)
// (bitwise), level 0 d < 2^-16; 511 = past 2^15.9, beyond exp's range.
constexpr int kStreamNone = 511;
constexpr std::uint32_t kStreamLo = 0x37800000U;  // bits of 2^-16
constexpr int kStreamShift = 19;

// Slots per thread of the stream (stream_row): f32 8 (128 KB a block) in
// the plain instance, 4 beside the kMod instance's 64 KB bitmap; bf16 none
// (its register rounds were faster, H100).
__host__ __device__ constexpr int stream_stages(bool mod, bool bf16) {
  return bf16 ? 0 : (mod ? 4 : 8);
}

// Ids whose logit bias or penalties change: at most kModCap list entries
// (bias entries plus the penalty window) and V <= kSkipIds.
constexpr int kModCap = 512;
constexpr std::int64_t kSkipIds = std::int64_t{1} << 19;

struct StreamSmem {
  std::uint32_t hist[kStreamNone + 1];
  std::uint32_t raw_key[kCandCap];  // as appended
  std::int32_t raw_id[kCandCap];
  std::uint32_t key[kCandCap];  // in id order
  std::int32_t ids[kCandCap];
  std::uint32_t ord_p[kCandCap];
  std::uint32_t ord_k[kCandCap];
  std::uint32_t flag[kCandCap];
  float wv[32];
  std::int32_t wi[32];
  double wsum[32];
  double total[2];
  unsigned cursor;
  int level;
  ArgMax best;
  unsigned mod_n;
  std::int32_t mod_id[kModCap];
  float mod_val[kModCap];
  std::uint32_t skip[kSkipIds / 32];
};

// Where the stream's slots start: after the StreamSmem fields the instance
// uses, 16-byte aligned.
__host__ __device__ constexpr std::size_t stream_stage_offset(bool mod) {
  return ((mod ? sizeof(StreamSmem) : offsetof(StreamSmem, mod_n)) + 15) / 16 * 16;
}

// A thread's largest values, descending. Ids ascend along a thread's
// stream and an equal value never passes an earlier one, so the first of
// equal values has the lowest id (the argmax tie rule).
struct Kept {
  float v[kKeep];
  std::int32_t id[kKeep];
  __device__ void clear() {
#pragma unroll
    for (int s = 0; s < kKeep; ++s) {
      v[s] = kNegInf;
      id[s] = INT32_MAX;
    }
  }
  // x > v[kKeep - 1].
  __device__ void offer(float x, std::int32_t i) {
    v[kKeep - 1] = x;
    id[kKeep - 1] = i;
#pragma unroll
    for (int s = kKeep - 1; s > 0; --s) {
      const bool up = v[s] > v[s - 1];
      const float tv = v[s];
      const std::int32_t ti = id[s];
      v[s] = up ? v[s - 1] : tv;
      id[s] = up ? id[s - 1] : ti;
      v[s - 1] = up ? tv : v[s - 1];
      id[s - 1] = up ? ti : id[s - 1];
    }
  }
};

// A thread's sum of 2^((w - top) * log2e_t) over its stream, with `top` its
// largest value so far (the sum rescaled when it rises), the lowest finite
// value it read, and how many times it rescaled: what mass_bound needs.
struct MassSum {
  float top = kNegInf, low = kPosInf;
  double sum = 0.0;
  int rescales = 0;
  template <int n>
  __device__ __forceinline__ void add(const float (&f)[n], float mx, float log2e_t) {
    if (mx > top) {
      sum *= static_cast<double>(ex2(top == kNegInf ? kNegInf : (top - mx) * log2e_t));
      top = mx;
      ++rescales;
    }
    if (top == kNegInf) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < n; ++j) s += ex2((f[j] - top) * log2e_t);
    sum += static_cast<double>(s);
    // The lowest finite value: the vector's min when it is finite (the
    // common case: one min per element, no compare and select), else per
    // element. The same value either way (fminf skips NaN as the compare did).
    float vmin = f[0];
#pragma unroll
    for (int j = 1; j < n; ++j) vmin = fminf(vmin, f[j]);
    if (vmin > kNegInf) {
      low = fminf(low, vmin);
    } else {
#pragma unroll
      for (int j = 0; j < n; ++j) low = f[j] > kNegInf ? fminf(low, f[j]) : low;
    }
  }
  __device__ __forceinline__ static float ex2(float y) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    return r;
  }
};

// The row's mass S (the host's: sum of exp_f32(w * inv_t - m * inv_t) over
// every id, plus `listed`, the listed ids' exact weights) lies in [lo, hi].
// Relative error of the stream's sum: each weight's argument is rounded
// (|y| * 3 * 2^-24 in log2 units), ex2.approx (2 ulp), each rescale and the
// final scaling likewise, the float partial sums of <= 8 terms; the host's
// exp_f32 (2 ulp) of an argument rounded from w * inv_t and m * inv_t. With D
// = max (m - lowest) * inv_t, K = |m * inv_t| and R the most rescales of a
// thread, all of it stays under (11 D + 2 K + 8 R + 33) * 2^-24; the bound
// takes 4x that, and twice it on each side. Usable only where finite and
// small (else the exact second read runs). Every thread calls it.
struct MassBound {
  double lo, hi;
  bool usable;
};
__device__ __forceinline__ MassBound mass_bound(const MassSum& ms, float m, float inv_t,
                                                float log2e_t, double listed, double* wsum,
                                                float* wv, std::int32_t* wi, double* total) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  double part =
      ms.top == kNegInf ? 0.0 : ms.sum * static_cast<double>(MassSum::ex2((ms.top - m) * log2e_t));
  part += listed;
  float d = ms.top == kNegInf ? 0.0f : (m - ms.low) * inv_t;
  int r = ms.rescales;
  // A warp's sum of the parts, and its largest D and rescale count, in lane 0.
  const auto fold = [](double& sum, float& dmax, int& rmax) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      sum += __shfl_down_sync(kFull, sum, o);
      dmax = fmaxf(dmax, __shfl_down_sync(kFull, dmax, o));
      rmax = max(rmax, __shfl_down_sync(kFull, rmax, o));
    }
  };
  fold(part, d, r);
  if (lane == 0) {
    wsum[warp] = part;
    wv[warp] = d;
    wi[warp] = r;
  }
  __syncthreads();
  if (warp == 0) {
    double t = wsum[lane];
    float dd = wv[lane];
    int rr = wi[lane];
    fold(t, dd, rr);
    if (lane == 0) {
      const double eps = 0x1p-22 * (16.0 * static_cast<double>(dd) +
                                    4.0 * fabs(static_cast<double>(m) * inv_t) + 8.0 * rr + 64.0);
      total[0] = t;
      total[1] = eps;
    }
  }
  __syncthreads();
  const double S = total[0], eps = total[1];
  __syncthreads();  // total is read again (the exact sum) if the bound fails
  const bool usable = S >= 0.5 && S < 1e300 && eps < 1e-3;
  return {S * (1.0 - 2.0 * eps), S * (1.0 + 2.0 * eps), usable};
}

// Calls fn(f, id0) for this thread's part of the row in ascending id order:
// 16-byte vectors (f holds their kVe values from id0) and single elements
// outside them (f[0]; the rest -inf). Masked ids read as -inf; nan: a NaN
// anywhere, masked or not. Threads run it independently (no barrier).
// With use_skip, the ids set in the shared-memory bitmap skip also read as
// -inf (ids whose logits bias or penalties change: the caller adds them
// itself). A flag, not a null pointer: the bitmap's address stays a shared
// one and the hot loop keeps its registers.
// With kStages > 0 the vectors go through kStages private 16-byte slots per
// thread in shared memory (stage[s * kRowThreads + tid]), filled by
// cp.async: thread t streams vectors t, t + 1024, ... (the order of the
// register rounds below), with kStages - 1 copies in flight while it works
// on one, so the loads never wait for the work. No barrier: a thread reads
// only its own slots, each after its own copy completed. With kStages == 0,
// rounds of four 16-byte loads into registers (bf16: its work per byte is
// twice f32's, and the slots' bookkeeping cost more than they saved).
template <int kStages, typename T, typename Fn>
__device__ void stream_row(const T* x, std::int64_t vocab, const std::uint32_t* mask,
                           const std::uint32_t* skip, bool use_skip, int& nan, uint4* stage,
                           Fn fn) {
  static_assert(kStages == 0 || (kStages >= 2 && (kStages & (kStages - 1)) == 0),
                "a power of two");
  constexpr int kVe = 16 / sizeof(T);
  const int tid = static_cast<int>(threadIdx.x);
  const auto addr = reinterpret_cast<std::uintptr_t>(x);
  // Elements before the first 16-byte boundary (all of them if the row is
  // not even element-aligned).
  const std::int64_t head =
      addr % sizeof(T) != 0
          ? vocab
          : min(vocab, static_cast<std::int64_t>(((16 - (addr & 15U)) & 15U) / sizeof(T)));
  auto single = [&](std::int64_t id) {
    float f[kVe];
    f[0] = load_elem(x, id);
    nan |= f[0] != f[0] ? 1 : 0;
    if (!mask_allows(mask, id) || (use_skip && ((skip[id >> 5] >> (id & 31)) & 1U) != 0))
      f[0] = kNegInf;
#pragma unroll
    for (int j = 1; j < kVe; ++j) f[j] = kNegInf;
    fn(f, id);
  };
  for (std::int64_t id = tid; id < head; id += kRowThreads) single(id);
  const std::int64_t nv = (vocab - head) / kVe;
  const auto* v16 = reinterpret_cast<const uint4*>(x + head);
  // Vector q of the row (ids head + q * kVe ...).
  auto vec = [&](const uint4& v, std::int64_t q) {
    const std::int64_t id0 = head + q * kVe;
    float f[kVe];
#pragma unroll
    for (int j = 0; j < kVe; ++j) {
      f[j] = vec_elem(v, j, x);
      nan |= f[j] != f[j] ? 1 : 0;
    }
    // The vector's bits of a bitmap, possibly across two words.
    auto bits_of = [&](const std::uint32_t* m) {
      const unsigned long long w = static_cast<unsigned long long>(m[id0 >> 5]) |
                                   static_cast<unsigned long long>(m[(id0 + kVe - 1) >> 5]) << 32;
      return static_cast<std::uint32_t>(w >> (id0 & 31));
    };
    if (mask != nullptr || use_skip) {  // per-element selects only then
      std::uint32_t keep = ~0U;
      if (mask != nullptr) keep &= bits_of(mask);
      if (use_skip) keep &= ~bits_of(skip);
#pragma unroll
      for (int j = 0; j < kVe; ++j)
        if (((keep >> j) & 1U) == 0) f[j] = kNegInf;
    }
    fn(f, id0);
  };
  if constexpr (kStages == 0) {
    (void)stage;
    constexpr int kU = 4;
    for (std::int64_t q0 = 0; q0 < nv; q0 += kRowThreads * kU) {
      uint4 v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const std::int64_t q = q0 + u * kRowThreads + tid;
        if (q < nv) v[u] = __ldg(v16 + q);
      }
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const std::int64_t q = q0 + u * kRowThreads + tid;
        if (q < nv) vec(v[u], q);
      }
    }
  } else {
    // This thread's vectors: q = i * kRowThreads + tid, i < n_mine.
    const auto n_mine = static_cast<unsigned>(nv > tid ? (nv - 1 - tid) / kRowThreads + 1 : 0);
    const auto slot0 = static_cast<std::uint32_t>(__cvta_generic_to_shared(stage + tid));
    constexpr std::uint32_t kSlotBytes = kRowThreads * 16;
    auto issue = [&](unsigned i) {
      if (i < n_mine) {
        const std::uint32_t dst = slot0 + (i % kStages) * kSlotBytes;
        const uint4* src = v16 + static_cast<std::int64_t>(i) * kRowThreads + tid;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
      }
      asm volatile("cp.async.commit_group;" ::: "memory");  // empty groups keep the count
    };
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) issue(static_cast<unsigned>(i));
    for (unsigned i = 0; i < n_mine; ++i) {
      issue(i + static_cast<unsigned>(kStages - 1));  // into the slot read last step
      asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 1) : "memory");
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(slot0 + (i % kStages) * kSlotBytes)
                   : "memory");
      vec(v, static_cast<std::int64_t>(i) * kRowThreads + tid);
    }
    asm volatile("cp.async.wait_all;" ::: "memory");  // only empty groups are left
  }
  for (std::int64_t id = head + nv * kVe + tid; id < vocab; id += kRowThreads) single(id);
}

// The ids whose logits bias or an active penalty change, with their
// processed values (the cluster kernel's arithmetic: the logit, masked,
// plus the bias entries in list order, then the penalties once per id), in
// sm.mod_id / sm.mod_val, and their bits in sm.skip. Returns false (every
// thread alike) when they do not fit.
template <typename T>
__device__ bool modified_ids(const PipelineArgs& a, const RowParams& p, int row, const T* x,
                             const std::uint32_t* mask, StreamSmem& sm);

// kMod: the batch may have bias or active penalties (the instance with the
// list and the bitmap; without them the kernel keeps its registers and
// shared memory to the stream). kMass: the batch has spec-order rows with
// top-p, whose stream also bounds the row's mass (below).
template <typename T, bool kMod, bool kMass>
__device__ void stream_one_row(const StreamArgs& sa, StreamSmem& sm, BlockStorage& bs, int row) {
  const PipelineArgs& a = sa.a;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const std::int64_t vocab = a.vocab;
  const RowParams p = sa.params_out != nullptr ? sa.params[row] : row_params(a, row);
  if (!params_valid(p)) {
    fail_row_params(a, row, 0, vocab, tid, kRowThreads, tid == 0);
    return;
  }
  // A row left to the cluster kernel: its params where that kernel reads
  // them (inline params only), then its place in the list.
  auto defer = [&] {
    if (tid == 0) {
      if (sa.params_out != nullptr) sa.params_out[row] = p;
      a.list[atomicAdd(a.count, 1U)] = row;
    }
  };
  // Sampled rows need top-k: the candidates are bounded through the k-th
  // largest weight.
  if ((p.temperature > 0.0f && !active_filters(p, vocab).top_k)) {
    defer();
    return;
  }
  // History ids outside [0, V) fail the row even without a penalty.
  int bad = 0;
  if (a.in.history != nullptr) {
    const std::int32_t len = a.in.history_len[row];
    const std::int32_t take = min(static_cast<std::int32_t>(p.window), len);
    const std::int32_t* win =
        a.in.history + static_cast<std::int64_t>(row) * a.in.history_stride + (len - take);
    for (int j = tid; j < take; j += kRowThreads) bad |= win[j] < 0 || win[j] >= vocab ? 1 : 0;
  }
  const T* x = static_cast<const T*>(a.logits) + row * vocab;
  const std::uint32_t* mask =
      a.in.mask == nullptr ? nullptr
                           : a.in.mask + static_cast<std::int64_t>(row) * ((vocab + 31) / 32);
  int n_mod = 0;
  if constexpr (kMod) {
    if (!modified_ids(a, p, row, x, mask, sm)) {
      defer();
      return;
    }
    n_mod = static_cast<int>(sm.mod_n);
  } else if (a.in.bias_offsets != nullptr ||
             (a.in.history != nullptr &&
              (p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f ||
               p.frequency_penalty != 0.0f))) {
    defer();  // the launch promised none; keep the row exact anyway
    return;
  }
  const bool skip = kMod && n_mod > 0;
  constexpr int kStages = stream_stages(kMod, sizeof(T) == 2);
  auto* stage = reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(&sm) +
                                         stream_stage_offset(kMod));
  Kept k;
  k.clear();
  int nan = 0;
  // The spec order's top-p cuts against top_p times the row's mass S. With
  // kMass the stream sums every weight against the thread's running max
  // (rescaled when it rises), by ex2.approx: S within a bound (mass_bound)
  // from this one read. The exact S needs the row max first, so a second read.
  const bool want_mass = kMass && p.temperature > 0.0f &&
                         p.filter_order != FilterOrder::kTopKFirst &&
                         active_filters(p, vocab).top_p;
  const float log2e_t =
      static_cast<float>(1.0 / static_cast<double>(p.temperature)) * 1.44269504088896341f;
  MassSum ms;
  stream_row<kStages>(x, vocab, mask, sm.skip, skip, nan, stage,
                      [&](const auto& f, std::int64_t id0) {
    constexpr int n = std::extent_v<std::remove_reference_t<decltype(f)>>;
    float mx = f[0];
#pragma unroll
    for (int j = 1; j < n; ++j) mx = fmaxf(mx, f[j]);
    if constexpr (kMass) {
      if (want_mass) ms.add(f, mx, log2e_t);
    }
    if (mx > k.v[kKeep - 1]) {
      // The vector's max first (its first occurrence): the others then
      // rarely pass, and a warp runs one insertion per step, not n.
      int jm = n - 1;
      float vm = f[n - 1];  // mx as stored (fmaxf may pick either zero)
#pragma unroll
      for (int j = n - 2; j >= 0; --j) {
        jm = f[j] == mx ? j : jm;
        vm = f[j] == mx ? f[j] : vm;
      }
      k.offer(vm, static_cast<std::int32_t>(id0 + jm));
#pragma unroll
      for (int j = 0; j < n; ++j)
        if (j != jm && f[j] > k.v[kKeep - 1]) k.offer(f[j], static_cast<std::int32_t>(id0 + j));
    }
  });
  nan = __syncthreads_or(nan);
  // Thread t < n_mod also holds listed id t (outside its kept list).
  const float mod_v = tid < n_mod ? sm.mod_val[tid] : kNegInf;
  const std::int32_t mod_i = tid < n_mod ? sm.mod_id[tid] : INT32_MAX;
  bad = __syncthreads_or(bad);

  // The row's max and argmax (lowest id of the max).
  if (tid == 0) sm.cursor = 0;
  for (int i = tid; i <= kStreamNone; i += kRowThreads) sm.hist[i] = 0;
  ArgMax mine{k.v[0], k.id[0]};
  if (mod_v > kNegInf) mine = better(mine, {mod_v, mod_i});  // as a kept value
  const ArgMax am = block_argmax_warp0(mine, sm.wv, sm.wi);
  if (tid == 0) sm.best = am;
  __syncthreads();
  const ArgMax best = sm.best;
  const float m = best.value;
  const RowStatus status = row_status(nan != 0, bad != 0, best);
  float* pr = a.out.probs != nullptr ? a.out.probs + row * vocab : nullptr;
  if (status != RowStatus::kOk || !(p.temperature > 0.0f)) {
    if (tid == 0) {
      a.out.tokens[row] = status == RowStatus::kOk ? best.index : -1;
      a.out.status[row] = static_cast<std::int32_t>(status);
    }
    if (pr != nullptr)
      for (std::int64_t i = tid; i < vocab; i += kRowThreads)
        pr[i] = (status == RowStatus::kOk && i == best.index) ? 1.0f : 0.0f;
    return;
  }

  // Levels of the kept values on the exp argument t, as every pass rounds
  // it, and their block histogram (one shared atomic per distinct level per
  // warp).
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(p.temperature));
  const float shift = m * inv_t;
  auto arg = [&](float w) { return w * inv_t - shift; };
  auto level = [&](float w) { return ladder_rel(arg(w), kStreamLo, kStreamShift, kStreamNone); };
  int lv[kKeep];
#pragma unroll
  for (int s = 0; s < kKeep; ++s) {
    lv[s] = level(k.v[s]);
    const unsigned peers = __match_any_sync(kFull, lv[s]);
    if (lv[s] < kStreamNone && lane == __ffs(peers) - 1)
      atomicAdd(&sm.hist[lv[s]], static_cast<unsigned>(__popc(peers)));
  }
  const int mod_lv = level(mod_v);  // -inf: past the last level
  if (mod_lv < kStreamNone) atomicAdd(&sm.hist[mod_lv], 1U);
  __syncthreads();
  // J: the first level whose kept values up to it number >= k; the row has
  // at least as many ids there, so the k-th largest weight is >= exp(-bound(J)).
  // The candidates are the ids of levels <= G = J + 1; every other id has
  // weight <= exp(-bound(G)), smaller (exp_f32 is non-decreasing), so the
  // top-k set lies inside them.
  if (warp == 0) {
    unsigned h[16], sum = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      h[i] = sm.hist[16 * lane + i];
      sum += h[i];
    }
    const unsigned inc = warp_inclusive_sum(sum);
    const auto kk = static_cast<unsigned>(p.top_k);
    const unsigned bal = __ballot_sync(kFull, inc >= kk);
    int G = -1;
    if (bal != 0U) {
      const int first = __ffs(bal) - 1;
      int J = 0;
      if (lane == first) {
        unsigned cum = inc - sum;
        int j = 0;
        for (; j < 15; ++j) {
          cum += h[j];
          if (cum >= kk) break;
        }
        J = 16 * lane + j;
      }
      J = __shfl_sync(kFull, J, first);
      G = J + 1;
      const bool gap = G < kStreamNone && exp_f32(-ladder_bound(kStreamLo, kStreamShift, J)) >
                                              exp_f32(-ladder_bound(kStreamLo, kStreamShift, G));
      G = gap ? G : -1;
    }
    if (lane == 0) sm.level = G;
  }
  __syncthreads();
  const int G = sm.level;
  if (G < 0) {
    if (tid == 0) atomicAdd(&g_pipeline_paths[kPathStreamDeferred], 1ULL);
    defer();
    return;
  }
  // Candidates with their weights. A thread whose last kept value is a
  // candidate may hold more: it reads its part of the row again.
  auto put = [&](float w, std::int64_t id) {
    const unsigned pos = atomicAdd(&sm.cursor, 1U);
    if (pos < static_cast<unsigned>(kCandCap)) {
      sm.raw_key[pos] = __float_as_uint(exp_f32(arg(w)));
      sm.raw_id[pos] = static_cast<std::int32_t>(id);
    }
  };
  if (mod_lv <= G) put(mod_v, mod_i);
  const bool again = lv[kKeep - 1] <= G;
  if (!again) {
#pragma unroll
    for (int s = 0; s < kKeep; ++s)
      if (lv[s] <= G) put(k.v[s], k.id[s]);
  } else {
    int ignored = 0;
    stream_row<kStages>(x, vocab, mask, sm.skip, skip, ignored, stage,
                        [&](const auto& f, std::int64_t id0) {
      constexpr int n = std::extent_v<std::remove_reference_t<decltype(f)>>;
#pragma unroll
      for (int j = 0; j < n; ++j)
        if (level(f[j]) <= G) put(f[j], id0 + j);
    });
  }
  const bool any_again = __syncthreads_or(again ? 1 : 0) != 0;
  const unsigned N = sm.cursor;
  if (N > static_cast<unsigned>(kCandCap)) {
    if (tid == 0) atomicAdd(&g_pipeline_paths[kPathStreamDeferred], 1ULL);
    defer();
    return;
  }
  if (tid == 0 && any_again) atomicAdd(&g_pipeline_paths[kPathStreamRescan], 1ULL);
  if (pr != nullptr) {
    for (std::int64_t i = tid; i < vocab; i += kRowThreads) pr[i] = 0.0f;
    __syncthreads();  // the tail writes the candidates' probabilities
  }
  RowCtx c{cg::this_cluster(), 0, 1, 0, 0, nullptr, &bs, 0};
  const Candidates cs{sm.raw_key, sm.raw_id, static_cast<int>(N), sm.key, sm.ids, sm.ord_p,
                      sm.ord_k,   sm.flag};
  const TailPaths paths{kPathStream, kPathStreamWarpTail};
  if (tid == 0 && n_mod > 0) atomicAdd(&g_pipeline_paths[kPathStreamModified], 1ULL);
  if (p.filter_order == FilterOrder::kTopKFirst || !active_filters(p, vocab).top_p) {
    // Top-k first (or no top-p: min-p keeps a prefix of the (e desc, id asc)
    // order, so the spec order keeps the same set).
    rank_filter_draw<true, false>(c, p, cs, 0.0, 0.0, vocab, row, a.rng, a.out, paths, false);
    return;
  }
  // The spec order's top-p is cut against top_p times the mass S of the
  // whole row. Every survivor has a weight >= the k-th largest, so every id
  // before it in the top-p order is a candidate and its mass before is
  // exact on the candidates. With kMass the stream's bound on S decides the
  // cut unless some candidate's mass before falls inside the bound's range.
  if constexpr (kMass) {
    const MassBound sb = mass_bound(ms, m, inv_t, log2e_t, static_cast<double>(exp_f32(arg(mod_v))),
                                    sm.wsum, sm.wv, sm.wi, sm.total);
    if (sb.usable && rank_filter_draw<false, false>(c, p, cs, static_cast<double>(p.top_p) * sb.lo,
                                                    static_cast<double>(p.top_p) * sb.hi, vocab,
                                                    row, a.rng, a.out, paths, false)) {
      if (tid == 0) atomicAdd(&g_pipeline_paths[kPathStreamMass], 1ULL);
      return;
    }
  }
  // The exact S: a second read sums every weight (per-thread doubles, warp
  // trees, warp 0 folds the 32 warp sums in a fixed order).
  double mass = static_cast<double>(exp_f32(arg(mod_v)));  // 0 without one
  int ignored = 0;
  stream_row<kStages>(x, vocab, mask, sm.skip, skip, ignored, stage,
                      [&](const auto& f, std::int64_t) {
    constexpr int n = std::extent_v<std::remove_reference_t<decltype(f)>>;
#pragma unroll
    for (int j = 0; j < n; ++j) mass += static_cast<double>(exp_f32(arg(f[j])));
  });
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mass += __shfl_down_sync(kFull, mass, o);
  if (lane == 0) sm.wsum[warp] = mass;
  __syncthreads();
  if (warp == 0) {
    double total = sm.wsum[lane];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) total += __shfl_down_sync(kFull, total, o);
    if (lane == 0) sm.total[0] = total;
  }
  __syncthreads();
  if (tid == 0) atomicAdd(&g_pipeline_paths[kPathStreamMassReread], 1ULL);
  const double limit = static_cast<double>(p.top_p) * sm.total[0];
  rank_filter_draw<false, false>(c, p, cs, limit, limit, vocab, row, a.rng, a.out, paths, false);
}

template <typename T>
__device__ bool modified_ids(const PipelineArgs& a, const RowParams& p, int row, const T* x,
                             const std::uint32_t* mask, StreamSmem& sm) {
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t vocab = a.vocab;
  const int nb =
      a.in.bias_offsets == nullptr ? 0 : a.in.bias_offsets[row + 1] - a.in.bias_offsets[row];
  const bool rep = p.repetition_penalty != 1.0f, pres = p.presence_penalty != 0.0f,
             freq = p.frequency_penalty != 0.0f;
  const std::int32_t len = a.in.history == nullptr ? 0 : a.in.history_len[row];
  const std::int32_t take =
      (rep || pres || freq) ? min(static_cast<std::int32_t>(p.window), len) : 0;
  const std::int64_t entries = static_cast<std::int64_t>(nb) + max(take, 0);
  if (tid == 0) sm.mod_n = 0;
  if (entries == 0) {
    __syncthreads();
    return true;
  }
  if (entries > kModCap || vocab > kSkipIds) return false;
  for (std::int64_t w = tid; w < (vocab + 31) / 32; w += kRowThreads) sm.skip[w] = 0;
  __syncthreads();
  const std::int32_t* bid = nb > 0 ? a.in.bias_ids + a.in.bias_offsets[row] : nullptr;
  const float* bval = nb > 0 ? a.in.bias_values + a.in.bias_offsets[row] : nullptr;
  const std::int32_t* win =
      take > 0 ? a.in.history + static_cast<std::int64_t>(row) * a.in.history_stride + (len - take)
               : nullptr;
  auto entry = [&](int e) { return e < nb ? bid[e] : win[e - nb]; };
  for (int e = tid; e < entries; e += kRowThreads) {
    const std::int32_t id = entry(e);
    if (id < 0 || id >= vocab) continue;  // bias: ignored; history: kBadHistory
    bool first = true;
    for (int q = 0; q < e && first; ++q) first = entry(q) != id;
    if (!first) continue;
    float w = mask_allows(mask, id) ? load_elem(x, id) : kNegInf;
    for (int q = 0; q < nb; ++q)
      if (bid[q] == id) w += bval[q];
    int n = 0;
    for (int q = 0; q < take; ++q) n += win[q] == id ? 1 : 0;
    if (n > 0) {
      if (rep) w = w < 0.0f ? w * p.repetition_penalty : w / p.repetition_penalty;
      if (pres) w -= p.presence_penalty;
      if (freq) w -= p.frequency_penalty * static_cast<float>(n);
    }
    const unsigned slot = atomicAdd(&sm.mod_n, 1U);
    sm.mod_id[slot] = id;
    sm.mod_val[slot] = w;
    atomicOr(&sm.skip[id >> 5], 1U << (id & 31));
  }
  __syncthreads();
  return true;
}

// Dynamic shared memory of an instance: StreamSmem (without kMod the list
// and the bitmap are unused), then the stream's slots.
constexpr std::size_t stream_smem_bytes(bool mod, bool bf16) {
  return stream_stage_offset(mod) +
         static_cast<std::size_t>(stream_stages(mod, bf16)) * kRowThreads * sizeof(uint4);
}

// The args in place (__grid_constant__): a block reads its row's inline
// params from the argument space, no local copy of the 10 KB.
// One instance per dtype (T: float or std::uint16_t for bf16): their
// shared memory differs (stream_smem_bytes).
template <typename T, bool kMod, bool kMass>
__global__ void __launch_bounds__(kRowThreads, 1)
    stream_kernel(const __grid_constant__ StreamArgs sa) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ BlockStorage bs;
  auto& sm = *reinterpret_cast<StreamSmem*>(dyn);
  const int row = static_cast<int>(blockIdx.x);
  grid_wait();     // the kernel before may write the logits, params, rng or list
  grid_trigger();  // the cluster kernel after may launch: it waits for this one
  stream_one_row<T, kMod, kMass>(sa, sm, bs, row);
}

}  // namespace nextok::cuda::dev
