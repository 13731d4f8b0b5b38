// The arguments of the pipeline kernels (the cluster-per-row kernel and the
// streaming kernel) and how a kernel reads a row's params and logits.
#pragma once

#include "backend/cuda/launch.hpp"
#include "backend/cuda/row_cluster.cuh"
#include "nextok/cuda.hpp"

namespace nextok::cuda::dev {

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
  // Rows the streaming kernel left to the cluster kernel: it appends them to
  // list[0 .. *count); the cluster kernel then runs only those, and its last
  // block resets *count and *done (so a captured graph replays). Null: the
  // cluster kernel runs row blockIdx.x / cluster of every row.
  std::int32_t* list;
  unsigned* count;
  unsigned* done;
};

__device__ __forceinline__ RowParams row_params(const PipelineArgs& a, int row) {
  if (a.params != nullptr) return a.params[row];
  RowParams p = a.inline_params[0];
#pragma unroll
  for (int i = 1; i < kInlineRows; ++i)
    if (row == i) p = a.inline_params[i];
  return p;
}

// A row's status from its NaN flag, its history check and its max / argmax
// (index INT32_MAX: nothing viable), in the host's order of checks.
__device__ __forceinline__ RowStatus row_status(bool nan, bool bad_history, ArgMax best) {
  if (nan) return RowStatus::kNanLogits;
  if (bad_history) return RowStatus::kBadHistory;
  if (best.index == INT32_MAX) return RowStatus::kNoViableToken;
  if (best.value == kPosInf) return RowStatus::kNonFiniteLogits;
  return RowStatus::kOk;
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

}  // namespace nextok::cuda::dev
