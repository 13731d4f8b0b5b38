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

// The streaming kernel's arguments: batches of up to kStreamInlineRows rows
// from host params carry them here too (kernel arguments up to 32 KB, CUDA
// 12.1+), so no host-to-device copy precedes the launch. The kernel reads
// them in place (__grid_constant__) and writes the params of each row it
// leaves to params_out[row], the device array the cluster kernel then reads
// (PipelineArgs::params).
constexpr int kStreamInlineRows = 256;
struct StreamArgs {
  PipelineArgs a;
  RowParams* params_out;  // null: a.params (device) or a.inline_params hold them
  RowParams params[kStreamInlineRows];
};

// Programmatic dependent launch (sm_90): the pipeline kernels launch with
// cudaLaunchAttributeProgrammaticStreamSerialization, so a launch may start
// while the kernel before it in the stream still runs. grid_wait() waits
// until that kernel has completed and its writes are visible: every global
// read or write comes after it. grid_trigger() lets the next such launch
// start (its own grid_wait still waits for this kernel to complete). Both
// are no-ops for a launch without the attribute.
__device__ __forceinline__ void grid_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void grid_trigger() {
  asm volatile("griddepcontrol.launch_dependents;");
}

__device__ __forceinline__ RowParams row_params(const PipelineArgs& a, int row) {
  if (a.params != nullptr) return a.params[row];
  RowParams p = a.inline_params[0];
#pragma unroll
  for (int i = 1; i < kInlineRows; ++i)
    if (row == i) p = a.inline_params[i];
  return p;
}

// The host's checks of one row's params (SamplerConfig::validate,
// PenaltyConfig::validate, Context::sample's temperature rule and the GPU's
// filter orders), for params the kernels read from device memory unchecked
// (Context::sample_device_params). Checked params always pass.
__device__ __forceinline__ bool params_valid(const RowParams& p) {
  const bool temperature = isfinite(p.temperature) && p.temperature >= 0.0f &&
                           !(p.temperature > 0.0f && p.temperature < kGreedyTemperature);
  const bool filters =
      isfinite(p.top_p) && p.top_p >= 0.0f && p.top_k >= 0 && p.min_p >= 0.0f && p.min_p <= 1.0f;
  const bool penalties = isfinite(p.repetition_penalty) && p.repetition_penalty > 0.0f &&
                         isfinite(p.presence_penalty) && isfinite(p.frequency_penalty);
  const bool order =
      p.filter_order == FilterOrder::kSpec || p.filter_order == FilterOrder::kTopKFirst;
  return temperature && filters && penalties && order;
}

// A row whose params fail params_valid: token -1, kInvalidParams, and a zero
// distribution row. Threads [t0, t0 + n) of the row's blocks share the
// writes; the caller's thread `t0` writes the token.
__device__ __forceinline__ void fail_row_params(const PipelineArgs& a, int row, std::int64_t from,
                                                std::int64_t to, int t, int n, bool writer) {
  if (writer) {
    a.out.tokens[row] = -1;
    a.out.status[row] = static_cast<std::int32_t>(RowStatus::kInvalidParams);
  }
  if (a.out.probs != nullptr)
    for (std::int64_t i = from + t; i < to; i += n) a.out.probs[row * a.vocab + i] = 0.0f;
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
