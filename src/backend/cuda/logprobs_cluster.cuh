// Top-k logprobs (k <= 20) of the raw logits, one row per cluster: the
// log-softmax normaliser in double, the k best by a count radix select on
// the order bits of the logits (ties to the lower id), sorted by rank 0.
// The second implementation: logprobs.cuh's one-read kernel is the default
// (detail::set_logprobs_one_read picks), and the tests hold both to the host.
#pragma once

#include "backend/cuda/row_cluster.cuh"
#include "nextok/config.hpp"
#include "nextok/cuda.hpp"

namespace nextok::cuda::dev {

struct ClusterLogprobsArgs {
  const void* logits;
  bool bf16;
  std::int64_t vocab;
  std::int32_t slice_len;
  std::int32_t per_thread;
  const std::uint32_t* k;
  const std::int32_t* chosen;
  LogprobsOutputs out;
};

struct ClusterPicks {
  float v[kMaxTopLogprobs];
  std::int32_t id[kMaxTopLogprobs];
  int n;
};

template <typename T>
__device__ void load_raw_slice(RowCtx& c, const T* x, int n_local, int& nan) {
  float* s = c.sm->slice;
  for (int xi = c.tid(); xi < c.cap(); xi += kRowThreads) {
    const float v = xi < n_local ? load_elem(x, c.base + xi) : kNegInf;
    nan |= v != v ? 1 : 0;
    s[xi] = v;
  }
}

__global__ void __launch_bounds__(kRowThreads, 1) logprobs_cluster_kernel(ClusterLogprobsArgs a) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ BlockStorage bs;
  __shared__ ClusterPicks picks;
  RowCtx c{cg::this_cluster(), 0, 0, a.per_thread, 0, reinterpret_cast<RowSmem*>(dyn), &bs, 0};
  c.rank = static_cast<int>(c.cl.block_rank());
  c.csize = static_cast<int>(c.cl.num_blocks());
  const int row = static_cast<int>(blockIdx.x) / c.csize;
  c.base = static_cast<std::int64_t>(c.rank) * a.slice_len;
  const int n_local = local_count(a.vocab, c.base, a.slice_len);
  if (c.tid() == 0) {
    bs.hist_buf = 0;
    picks.n = 0;
  }
  const auto k = static_cast<int>(a.k[row]);
  int nan = 0;
  if (a.bf16) {
    load_raw_slice(c, static_cast<const std::uint16_t*>(a.logits) + row * a.vocab, n_local, nan);
  } else {
    load_raw_slice(c, static_cast<const float*>(a.logits) + row * a.vocab, n_local, nan);
  }
  nan = c.block_or(nan);
  float* s = c.sm->slice;
  const int x0 = c.tid() * c.P;
  float mx = kNegInf;
  for (int j = 0; j < c.P; ++j) mx = fmaxf(mx, s[x0 + j]);
  mx = c.block_argmax({mx, 0}).value;
  const int ph0 = c.exchange(Slot{mx, 0, nan, 0, 0});
  float m = kNegInf;
  int any_nan = 0;
  for (int r = 0; r < c.csize; ++r) {
    m = fmaxf(m, static_cast<float>(c.peer(r, ph0).d0));
    any_nan |= c.peer(r, ph0).i0;
  }
  RowStatus st = RowStatus::kOk;
  if (a.k[row] > kMaxTopLogprobs) {  // device-resident k is unchecked
    st = RowStatus::kInvalidParams;
  } else if (any_nan) {
    st = RowStatus::kNanLogits;
  } else if (m == kNegInf) {
    st = RowStatus::kNoViableToken;
  } else if (m == kPosInf) {
    st = RowStatus::kNonFiniteLogits;
  }
  if (st != RowStatus::kOk || k == 0) {
    if (c.rank == 0 && c.tid() == 0) {
      a.out.count[row] = 0;
      a.out.status[row] = static_cast<std::int32_t>(st);
      a.out.chosen_logprob[row] = 0.0f;
    }
    c.cl.sync();
    return;
  }
  double z = 0.0;
  for (int j = 0; j < c.P; ++j) z += static_cast<double>(exp_f32(s[x0 + j] - m));
  z = c.block_sum(z);
  const int ph1 = c.exchange(Slot{z, 0, 0, 0, 0});
  double total = 0.0;
  for (int r = 0; r < c.csize; ++r) total += c.peer(r, ph1).d0;
  const double lse = static_cast<double>(m) + log(total);

  auto finite = [&](int xi, std::int64_t) { return Elem{s[xi] > kNegInf, order_bits(s[xi])}; };
  const Boundary b = radix_select(c, finite, false, [&](double) { return double(k); });
  std::int32_t cut = INT32_MAX;
  if (b.found) {
    const auto room = static_cast<std::int64_t>(k - b.above);
    if (room < b.tie) {
      const std::uint32_t kv = b.key;
      cut = id_at_rank(
          c, [&](int xi, std::int64_t) { return s[xi] > kNegInf && order_bits(s[xi]) == kv; },
          room);
    }
  }
  for (int j = 0; j < c.P; ++j) {
    const int xi = x0 + j;
    const std::int64_t id = c.base + xi;
    if (!(s[xi] > kNegInf)) continue;
    const std::uint32_t key = order_bits(s[xi]);
    if (!b.found || key > b.key || (key == b.key && id < cut)) {
      const int at = atomicAdd(&picks.n, 1);
      if (at < static_cast<int>(kMaxTopLogprobs)) {
        picks.v[at] = s[xi];
        picks.id[at] = static_cast<std::int32_t>(id);
      }
    }
  }
  __syncthreads();
  c.cl.sync();
  if (c.rank == 0 && c.tid() == 0) {
    float v[kMaxTopLogprobs];
    std::int32_t ids[kMaxTopLogprobs];
    int n = 0;
    for (int r = 0; r < c.csize; ++r) {
      const ClusterPicks* q = c.cl.map_shared_rank(&picks, r);
      const int qn = min(q->n, static_cast<int>(kMaxTopLogprobs));
      for (int i = 0; i < qn && n < k; ++i) {
        // Insertion by (value desc, id asc).
        const float qv = q->v[i];
        const std::int32_t qi = q->id[i];
        int at = n++;
        while (at > 0 && (v[at - 1] < qv || (v[at - 1] == qv && ids[at - 1] > qi))) {
          v[at] = v[at - 1];
          ids[at] = ids[at - 1];
          --at;
        }
        v[at] = qv;
        ids[at] = qi;
      }
    }
    for (int i = 0; i < n; ++i) {
      a.out.ids[row * kMaxTopLogprobs + i] = ids[i];
      a.out.logprobs[row * kMaxTopLogprobs + i] =
          static_cast<float>(static_cast<double>(v[i]) - lse);
    }
    a.out.count[row] = n;
    a.out.status[row] = 0;
    const std::int32_t ch = a.chosen[row];
    float cl = 0.0f;
    if (ch >= 0 && ch < a.vocab) {
      const float x =
          a.bf16 ? load_elem(static_cast<const std::uint16_t*>(a.logits), row * a.vocab + ch)
                 : load_elem(static_cast<const float*>(a.logits), row * a.vocab + ch);
      cl = static_cast<float>(static_cast<double>(x) - lse);
    }
    a.out.chosen_logprob[row] = cl;
  }
  c.cl.sync();
}

}  // namespace nextok::cuda::dev
