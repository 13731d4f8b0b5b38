// Stages 1-11 for one row per cluster, in the spec or the top_k_first order:
// load + mask, bias and penalties, max, then the fast path (fast_path.cuh)
// or, when it cannot decide, the weights e (the host's exp, bit for bit),
// top-p / min-p / top-k by radix select on the bits of e with exact
// per-bucket masses, and the inverse-CDF draw in id order.
#pragma once

#include <type_traits>

#include "backend/cuda/fast_path.cuh"
#include "backend/cuda/pipeline_args.cuh"

namespace nextok::cuda::dev {

// Also the slice's argmax `am` as loaded (masked): a thread visits its ids
// in ascending order (vector q0 + u * kRowThreads + tid, then the element
// loop), so a strict > keeps the lowest id of its max and skips -inf and
// NaN; the block folds with better(). Computed while the loads are in
// flight, it spares a pass over the slice when nothing changes the logits.
template <typename T>
__device__ void load_slice(RowCtx& c, const T* x, std::int64_t vocab, const std::uint32_t* mask,
                           int n_local, int& nan, ArgMax& am) {
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
    const auto id_base = static_cast<std::int32_t>(c.base);  // V < 2^31
    // One instance without the mask: its per-element test, even predicated
    // off, was ~40% of this loop's instructions.
    auto run = [&](auto kMask) {
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
            if constexpr (decltype(kMask)::value) {
              if (!mask_allows(mask, c.base + q * kVe + j)) f[j] = kNegInf;
            }
            const bool up = f[j] > am.value;
            am.value = up ? f[j] : am.value;
            am.index = up ? id_base + q * kVe + j : am.index;
          }
#pragma unroll
          for (int j = 0; j < kVe; j += 4)
            *reinterpret_cast<float4*>(s + q * kVe + j) =
                make_float4(f[j], f[j + 1], f[j + 2], f[j + 3]);
        }
      }
    };
    if (mask != nullptr) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
    done = nv * kVe;
  }
  for (int xi = done + c.tid(); xi < cap; xi += kRowThreads) {
    const float f = xi < n_local ? load_elem(x, c.base + xi) : kNegInf;
    nan |= f != f ? 1 : 0;
    const float w = (xi < n_local && mask_allows(mask, c.base + xi)) ? f : kNegInf;
    s[xi] = w;
    const bool up = w > am.value;
    am.value = up ? w : am.value;
    am.index = up ? static_cast<std::int32_t>(c.base + xi) : am.index;
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

// One row on this cluster, with its params p. kKfirst: the batch has
// top_k_first rows. Batches without them run the instance without that code
// (a smaller kernel: ~0.7 us at B = 1). listed: a row of the listed kernel,
// which builds the exp pass's level table here (the one-row kernel builds
// it, and the fast path's gather mbarrier, before its grid_wait).
template <bool kKfirst>
__device__ __forceinline__ void pipeline_row(const PipelineArgs& a, RowCtx& c, int row,
                                             const RowParams& p, bool listed) {
  BlockStorage& bs = *c.bs;
  const bool st = a.stamp;
  const unsigned long long t_start = st ? global_ns() : 0ULL;
  stamp_at(st, 0);
  block_stamp(st, 0);
  c.phase = 0;
  c.base = static_cast<std::int64_t>(c.rank) * a.slice_len;
  // Per row: the radix path of a listed row before may have used its space.
  // Read by the exp pass, after the barriers of the max.
  if (listed) ladder_lut_init(ladder_lut_of(c.sm));
  const int n_local = local_count(a.vocab, c.base, a.slice_len);
  if (c.tid() == 0) bs.hist_buf = 0;
  if (!params_valid(p)) {  // every block of the cluster reads the same params
    fail_row_params(a, row, c.base, c.base + n_local, c.tid(), kRowThreads,
                    c.rank == 0 && c.tid() == 0);
    c.cl.sync();
    return;
  }
  const std::uint32_t* mask =
      a.in.mask == nullptr ? nullptr
                           : a.in.mask + static_cast<std::int64_t>(row) * ((a.vocab + 31) / 32);
  float* s = c.sm->slice;

  // Stage 1.
  int nan = 0;
  ArgMax am{kNegInf, INT32_MAX};
  if (a.bf16) {
    load_slice(c, static_cast<const std::uint16_t*>(a.logits) + row * a.vocab, a.vocab, mask,
               n_local, nan, am);
  } else {
    load_slice(c, static_cast<const float*>(a.logits) + row * a.vocab, a.vocab, mask, n_local, nan,
               am);
  }
  stamp_at(st, 1);
  block_stamp(st, 1);
  // Max / argmax of the processed logits: the load's, unless bias or
  // penalties changed the slice. Without them no barrier here: the NaN flag
  // folds with the argmax, and the barriers of that fold and of the
  // exchange order the slice's stores before the exp pass reads them.
  const int x0 = c.tid() * c.P;
  bool bad_history = false;
  if (a.in.bias_offsets != nullptr || a.in.history != nullptr) {
    __syncthreads();  // the slice as loaded
    bad_history = apply_penalties(c, p, a.in, row, a.vocab, n_local);
    am = ArgMax{kNegInf, INT32_MAX};
    // Ids ascend along the chunk: a strict > keeps the lowest id of the max
    // (better()'s tie rule) and skips -inf and NaN, with selects, no branch.
    for (int j = 0; j < c.P; ++j) {
      const float v = s[x0 + j];
      const bool up = v > am.value;
      am.value = up ? v : am.value;
      am.index = up ? static_cast<std::int32_t>(c.base + x0 + j) : am.index;
    }
  }
  stamp_at(st, 2);
  am = block_argmax_warp0(am, reinterpret_cast<float*>(c.sm->local_cnt[0]),
                          reinterpret_cast<std::int32_t*>(c.sm->local_cnt[1]), &nan);
  block_stamp(st, 4);
  int any_nan = 0;
  const ArgMax best = c.exchange_argmax(am, nan, any_nan);  // tid 0 posts
  const float m = best.value;
  stamp_at(st, 3);
  block_stamp(st, 2);
  const RowStatus status = row_status(any_nan != 0, bad_history, best);
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
  const auto [top_p, min_p, top_k] = active_filters(p, a.vocab);
  const bool k_first = kKfirst && top_k && p.filter_order == FilterOrder::kTopKFirst;
  bool done = false;
  if constexpr (kKfirst) {
    done = k_first ? fast_pipeline<true>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t,
                                         shift, !listed)
                   : fast_pipeline<false>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t,
                                          shift, !listed);
  } else {
    done =
        fast_pipeline<false>(c, p, a.vocab, n_local, row, a.rng, a.out, st, inv_t, shift, !listed);
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
  const RngState gen = *g;
  const float u = pcg_uniform(gen.state);
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
    commit_draw(a.out, row, token, g, gen, k_first ? kPathKfirstRadix : kPathRadix);
  if (a.out.probs != nullptr) {
    float* pr = a.out.probs + row * a.vocab;
    for (int xi = c.tid(); xi < n_local; xi += kRowThreads)
      pr[c.base + xi] =
          survives(xi, c.base + xi) ? static_cast<float>(static_cast<double>(s[xi]) / total) : 0.0f;
  }
  c.cl.sync();
}

// kListed: run only the rows the streaming kernel left (a.list); cluster i
// runs list entries i, i + clusters, ... with a cluster barrier between rows
// (the next row reuses the exchange slots and the shared memory). Its own
// instance: the loop in the one-row kernel cost every batch size.
template <bool kKfirst, bool kListed>
__global__ void __launch_bounds__(kRowThreads, 1) pipeline_kernel(PipelineArgs a) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ BlockStorage bs;
  RowCtx c{cg::this_cluster(), 0, 0, a.per_thread, 0, reinterpret_cast<RowSmem*>(dyn), &bs, 0};
  c.rank = static_cast<int>(c.cl.block_rank());
  c.csize = static_cast<int>(c.cl.num_blocks());
  const unsigned me = blockIdx.x / static_cast<unsigned>(c.csize);
  // Launched as a programmatic dependent (launch_pipeline): the kernel
  // before it in the stream may still run; wait for it before any global
  // access, then let the next launch start (it waits for this one). What
  // reads only kernel arguments and shared memory comes first, so that it
  // overlaps the end of the kernel before (back-to-back calls): the row's
  // params when they are inline (row_params selects among 16 rows), the
  // exp pass's level table and rank 0's gather mbarrier (fast_pipeline; the
  // max exchange's cluster barrier publishes it).
  RowParams p{};
  if constexpr (!kListed) {
    if (a.params == nullptr) p = row_params(a, static_cast<int>(me));
    ladder_lut_init(ladder_lut_of(c.sm));
    if (c.rank == 0 && threadIdx.x == 0)
      mbar_init(smem_addr(&bs.gather_bar), static_cast<std::uint32_t>(kRowThreads));
  }
  grid_wait();
  grid_trigger();
  if constexpr (!kListed) {
    if (a.params != nullptr) p = a.params[me];
    pipeline_row<kKfirst>(a, c, static_cast<int>(me), p, false);
  } else {
    const unsigned n = *static_cast<volatile unsigned*>(a.count);
    const unsigned stride = gridDim.x / static_cast<unsigned>(c.csize);
    for (unsigned i = me; i < n; i += stride) {
      const int row = a.list[i];
      pipeline_row<kKfirst>(a, c, row, row_params(a, row), true);
      c.cl.sync();
    }
    // Every block has read *count before it counts itself done: the last
    // one resets both for the next call.
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      if (atomicAdd(a.done, 1U) == gridDim.x - 1) {
        *a.count = 0;
        *a.done = 0;
        __threadfence();
      }
    }
  }
}

}  // namespace nextok::cuda::dev
