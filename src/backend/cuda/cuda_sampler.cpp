// The validation layer of the CUDA backend: shapes, dtypes and per-row
// configs are checked on the host (typed nextok::Error), scratch is sized,
// then the kernels are enqueued on the view's stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/launch.hpp"
#include "nextok/cuda.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"

namespace nextok::cuda {
namespace {

void check(int err, const char* what) {
  if (err != 0)
    throw Error(ErrorCode::kUnsupported, "device",
                std::string(what) + ": " + cudaGetErrorString(static_cast<cudaError_t>(err)));
}

void check_view(const LogitsView& v) {
  if (v.device != Device::kCUDA)
    throw Error(ErrorCode::kUnsupported, "device", "the CUDA backend needs a Device::kCUDA view");
  if (v.dtype != DType::kF32 && v.dtype != DType::kBF16)
    throw Error(ErrorCode::kUnsupported, "dtype", "logits dtype must be f32 or bf16");
  if (v.vocab <= 0 || v.vocab > (std::int64_t{1} << 31) - 1 || v.rows <= 0 ||
      v.rows > (std::int64_t{1} << 20))
    throw Error(ErrorCode::kShapeMismatch, "logits",
                "logits shape must be [B, V] with 1 <= B <= 2^20 and 1 <= V < 2^31, got [" +
                    std::to_string(v.rows) + ", " + std::to_string(v.vocab) + "]");
  if (v.data == nullptr) throw Error(ErrorCode::kShapeMismatch, "logits", "logits data is null");
}

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  std::size_t size = 0;
  void reserve(std::size_t n, bool zero = false) {
    if (n <= size) return;
    if (ptr != nullptr) cudaFree(ptr);
    ptr = nullptr;
    size = 0;
    check(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)), "cudaMalloc");
    if (zero) check(cudaMemset(ptr, 0, n * sizeof(T)), "cudaMemset");
    size = n;
  }
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

}  // namespace

struct Context::Impl {
  DeviceBuffer<unsigned char> partials;
  DeviceBuffer<unsigned> counters;
  DeviceBuffer<unsigned char> lp_parts;
  DeviceBuffer<unsigned> lp_counters;
  DeviceBuffer<RowParams> params;
  DeviceBuffer<std::uint32_t> k;
  DeviceBuffer<std::int32_t> row_list;  // rows the streaming kernel leaves
  DeviceBuffer<unsigned> list_counts;   // count, done: zero between calls

  // What the batch's params let the launch leave out (all false: the
  // instances that handle every row).
  struct Hints {
    bool k_first_rows = true;
    std::int64_t stream_rows = -1;  // -1: every row may stream
    bool spec_top_p =
        false;  // some row is spec-order with top-p (its mass: bounded, or a second read)
    bool penalised = true;
  };
  // Large batches stream the rows they can first; the cluster kernel's
  // layout is then sized for the rows expected to be left.
  // Spec-order top-p rows bound their mass from the stream's one read and
  // stream from the same batch size as the others (H100, V 151936 f32: B = 32
  // in 45 us against the cluster kernel's 76, B = 16 a tie at 45). With the
  // bound off they read the row twice, which costs the streaming kernel
  // about twice as much: such batches stream from 4x the rows (H200: B = 64
  // in 67 us against 116 us, B = 16 in 66 against ~39 us).
  static bool streams(const LogitsView& logits, const Hints& h) {
    const std::int64_t stream_rows = h.stream_rows < 0 ? logits.rows : h.stream_rows;
    const std::int64_t min_rows = detail::stream_min_rows();
    const bool two_reads = h.spec_top_p && !detail::stream_mass_bound();
    return stream_rows > 0 &&
           logits.rows >= (two_reads && min_rows <= INT64_MAX / 4 ? 4 * min_rows : min_rows);
  }
  void launch_sample(const LogitsView& logits, const RowParams* device_params,
                     const RowParams* inline_params, const Hints& h, const PipelineInputs& in,
                     RngState* rng, const PipelineOutputs& out);
  void launch_logprobs(const LogitsView& logits, const std::uint32_t* device_k,
                       const std::int32_t* chosen, const LogprobsOutputs& out);
};

namespace {

void check_pipeline_io(const PipelineInputs& in, RngState* rng, const PipelineOutputs& out) {
  if (rng == nullptr || out.tokens == nullptr || out.status == nullptr)
    throw Error(ErrorCode::kShapeMismatch, "outputs", "rng, tokens and status are required");
  if ((in.history == nullptr) != (in.history_len == nullptr) ||
      (in.history != nullptr && in.history_stride <= 0))
    throw Error(ErrorCode::kInvalidArgument, "history",
                "history needs history_len and a positive history_stride");
  if ((in.bias_offsets == nullptr) != (in.bias_ids == nullptr) ||
      (in.bias_ids == nullptr) != (in.bias_values == nullptr))
    throw Error(ErrorCode::kInvalidArgument, "logit_bias", "bias needs offsets, ids and values");
}

void check_logprobs_io(const std::int32_t* chosen, const LogprobsOutputs& out) {
  if (chosen == nullptr || out.ids == nullptr || out.logprobs == nullptr || out.count == nullptr ||
      out.chosen_logprob == nullptr || out.status == nullptr)
    throw Error(ErrorCode::kShapeMismatch, "outputs", "every logprobs output is required");
}

}  // namespace

bool built_with_cuda() noexcept {
  return true;
}

bool device_available() noexcept {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
}

Context::Context() : impl_(std::make_unique<Impl>()) {
  if (!device_available()) throw Error(ErrorCode::kUnsupported, "device", "no usable CUDA device");
}
Context::~Context() = default;

void Context::argmax(const LogitsView& logits, const std::uint32_t* mask, std::int32_t* tokens,
                     std::int32_t* status) {
  check_view(logits);
  if (tokens == nullptr) throw Error(ErrorCode::kShapeMismatch, "tokens", "tokens is null");
  const int splits = detail::argmax_splits(logits.rows, logits.vocab);
  const auto rows = static_cast<std::size_t>(logits.rows);
  impl_->partials.reserve(rows * static_cast<std::size_t>(splits) *
                          detail::ArgmaxPartialBytes::kSize);
  impl_->counters.reserve(rows, /*zero=*/true);
  check(detail::launch_argmax(logits.data, logits.dtype == DType::kBF16, logits.rows, logits.vocab,
                              mask, splits, impl_->partials.ptr, impl_->counters.ptr, tokens,
                              status, logits.stream),
        "argmax launch");
}

void Context::sample(const LogitsView& logits, std::span<const RowParams> params,
                     const PipelineInputs& in, RngState* rng, const PipelineOutputs& out) {
  check_view(logits);
  if (static_cast<std::int64_t>(params.size()) != logits.rows)
    throw Error(ErrorCode::kShapeMismatch, "params",
                "one RowParams per row is needed: " + std::to_string(params.size()) + " for " +
                    std::to_string(logits.rows) + " rows");
  Impl::Hints h{false, 0, false, false};
  for (const RowParams& p : params) {
    h.penalised |=
        p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
    const bool fits = detail::stream_fits(p, logits.vocab);
    h.stream_rows += fits ? 1 : 0;
    h.spec_top_p |= fits && p.temperature > 0.0f && p.filter_order != FilterOrder::kTopKFirst &&
                    p.top_p > 0.0f && p.top_p < 1.0f;
    detail::require_gpu_filter_order(p.filter_order);
    h.k_first_rows |=
        p.filter_order == FilterOrder::kTopKFirst && p.top_k > 0 && p.top_k < logits.vocab;
    SamplerConfig c;
    c.temperature = p.temperature;
    c.top_p = p.top_p;
    c.top_k = p.top_k;
    c.min_p = p.min_p;
    c.validate();
    // The kernels divide by any temperature > 0, and 1/T overflows in the
    // greedy range; RowParams::from passes it as 0.
    if (p.temperature > 0.0f && !c.sampling_active())
      throw Error(ErrorCode::kInvalidArgument, "temperature",
                  "temperature: below kGreedyTemperature (1e-5) is greedy; pass 0 (as "
                  "RowParams::from does)");
    PenaltyConfig pc;
    pc.repetition_penalty = p.repetition_penalty;
    pc.presence_penalty = p.presence_penalty;
    pc.frequency_penalty = p.frequency_penalty;
    pc.window = p.window;
    pc.validate();
  }
  check_pipeline_io(in, rng, out);
  // Small batches carry their params in the kernel arguments: no upload.
  if (logits.rows <= detail::pipeline_inline_rows()) {
    impl_->launch_sample(logits, nullptr, params.data(), h, in, rng, out);
    return;
  }
  impl_->params.reserve(params.size());
  // Streamed batches of up to stream_inline_rows() rows carry their params
  // in the streaming kernel's arguments: no upload (the kernel writes the
  // params of the rows it leaves into impl_->params for the cluster kernel).
  if (logits.rows <= detail::stream_inline_rows() && impl_->streams(logits, h)) {
    impl_->launch_sample(logits, impl_->params.ptr, params.data(), h, in, rng, out);
    return;
  }
  check(cudaMemcpyAsync(impl_->params.ptr, params.data(), params.size_bytes(),
                        cudaMemcpyHostToDevice, static_cast<cudaStream_t>(logits.stream)),
        "params upload");
  impl_->launch_sample(logits, impl_->params.ptr, nullptr, h, in, rng, out);
}

void Context::sample_device_params(const LogitsView& logits, const RowParams* params,
                                   const PipelineInputs& in, RngState* rng,
                                   const PipelineOutputs& out) {
  check_view(logits);
  if (params == nullptr) throw Error(ErrorCode::kShapeMismatch, "params", "params is null");
  check_pipeline_io(in, rng, out);
  // Nothing is known of the rows: the instances that take every kind.
  Impl::Hints h;
  h.penalised = in.history != nullptr;
  impl_->launch_sample(logits, params, nullptr, h, in, rng, out);
}

void Context::Impl::launch_sample(const LogitsView& logits, const RowParams* device_params,
                                  const RowParams* inline_params, const Hints& h,
                                  const PipelineInputs& in, RngState* rng,
                                  const PipelineOutputs& out) {
  const std::int64_t stream_rows = h.stream_rows < 0 ? logits.rows : h.stream_rows;
  const bool streamed = streams(logits, h);
  const detail::RowLayout lay = detail::pipeline_layout(
      streamed && h.stream_rows >= 0 ? std::max<std::int64_t>(logits.rows - stream_rows, 1)
                                     : logits.rows,
      logits.vocab);
  if (lay.cluster == 0)
    throw Error(ErrorCode::kUnsupported, "vocab",
                "V=" + std::to_string(logits.vocab) + " does not fit the CUDA row layout");
  detail::RowList list;
  if (streamed) {
    row_list.reserve(static_cast<std::size_t>(logits.rows));
    list_counts.reserve(2, /*zero=*/true);
    list = {row_list.ptr, list_counts.ptr, list_counts.ptr + 1,
            in.bias_offsets != nullptr || (in.history != nullptr && h.penalised),
            h.spec_top_p && detail::stream_mass_bound()};
  }
  const int err = detail::launch_pipeline(
      lay, logits.data, logits.dtype == DType::kBF16, logits.rows, logits.vocab, device_params,
      inline_params, h.k_first_rows, in, rng, out, streamed ? &list : nullptr, logits.stream);
  if (err != 0 && streamed)  // the list must start empty next time
    cudaMemsetAsync(list_counts.ptr, 0, 2 * sizeof(unsigned),
                    static_cast<cudaStream_t>(logits.stream));
  check(err, "pipeline launch");
}

void Context::top_logprobs(const LogitsView& logits, std::span<const std::uint32_t> k,
                           const std::int32_t* chosen, const LogprobsOutputs& out) {
  check_view(logits);
  if (static_cast<std::int64_t>(k.size()) != logits.rows)
    throw Error(ErrorCode::kShapeMismatch, "top_logprobs", "one k per row is needed");
  for (std::uint32_t x : k) {
    if (x > kMaxTopLogprobs)
      throw Error(ErrorCode::kInvalidArgument, "top_logprobs",
                  "top_logprobs must be <= " + std::to_string(kMaxTopLogprobs) + ", got " +
                      std::to_string(x));
  }
  check_logprobs_io(chosen, out);
  impl_->k.reserve(k.size());
  check(cudaMemcpyAsync(impl_->k.ptr, k.data(), k.size_bytes(), cudaMemcpyHostToDevice,
                        static_cast<cudaStream_t>(logits.stream)),
        "k upload");
  impl_->launch_logprobs(logits, impl_->k.ptr, chosen, out);
}

void Context::top_logprobs_device_k(const LogitsView& logits, const std::uint32_t* k,
                                    const std::int32_t* chosen, const LogprobsOutputs& out) {
  check_view(logits);
  if (k == nullptr) throw Error(ErrorCode::kShapeMismatch, "top_logprobs", "k is null");
  check_logprobs_io(chosen, out);
  impl_->launch_logprobs(logits, k, chosen, out);
}

void Context::Impl::launch_logprobs(const LogitsView& logits, const std::uint32_t* device_k,
                                    const std::int32_t* chosen, const LogprobsOutputs& out) {
  if (!detail::logprobs_one_read()) {
    const detail::RowLayout lay = detail::logprobs_cluster_layout(logits.rows, logits.vocab);
    if (lay.cluster == 0)
      throw Error(ErrorCode::kUnsupported, "vocab",
                  "V=" + std::to_string(logits.vocab) + " does not fit the CUDA row layout");
    check(
        detail::launch_logprobs_cluster(lay, logits.data, logits.dtype == DType::kBF16, logits.rows,
                                        logits.vocab, device_k, chosen, out, logits.stream),
        "logprobs launch");
    return;
  }
  const int splits =
      detail::logprobs_splits(logits.rows, logits.vocab, logits.dtype == DType::kBF16);
  const auto rows = static_cast<std::size_t>(logits.rows);
  lp_parts.reserve(rows * static_cast<std::size_t>(splits) * detail::logprobs_part_bytes());
  lp_counters.reserve(rows, /*zero=*/true);
  check(detail::launch_logprobs(logits.data, logits.dtype == DType::kBF16, logits.rows,
                                logits.vocab, splits, device_k, chosen, lp_parts.ptr,
                                lp_counters.ptr, out, logits.stream),
        "logprobs launch");
}

void Context::apply_token_bitmask(void* logits, DType dtype, std::int64_t rows, std::int64_t vocab,
                                  const std::uint32_t* mask, std::int64_t words_per_row,
                                  void* stream) {
  LogitsView v;
  v.data = logits;
  v.dtype = dtype;
  v.rows = rows;
  v.vocab = vocab;
  v.device = Device::kCUDA;
  check_view(v);
  if (mask == nullptr) throw Error(ErrorCode::kShapeMismatch, "mask", "mask is null");
  if (words_per_row < (vocab + 31) / 32)
    throw Error(ErrorCode::kShapeMismatch, "mask",
                "the bitmask needs ceil(V/32) = " + std::to_string((vocab + 31) / 32) +
                    " words per row, got " + std::to_string(words_per_row));
  check(detail::launch_apply_bitmask(logits, dtype == DType::kBF16, rows, vocab, mask,
                                     words_per_row, stream),
        "bitmask launch");
}

void Context::reserve(std::int64_t rows, std::int64_t vocab) {
  LogitsView v;
  v.data = this;  // any non-null pointer: only the shape is checked
  v.rows = rows;
  v.vocab = vocab;
  v.device = Device::kCUDA;
  check_view(v);
  const auto n = static_cast<std::size_t>(rows);
  // Split counts are largest for one row; rows x that bounds every batch.
  impl_->partials.reserve(n * static_cast<std::size_t>(detail::argmax_splits(1, vocab)) *
                          detail::ArgmaxPartialBytes::kSize);
  impl_->counters.reserve(n, /*zero=*/true);
  impl_->lp_parts.reserve(
      n * static_cast<std::size_t>(detail::logprobs_splits(1, vocab, /*bf16=*/true)) *
      detail::logprobs_part_bytes());
  impl_->lp_counters.reserve(n, /*zero=*/true);
  impl_->params.reserve(n);
  impl_->k.reserve(n);
  impl_->row_list.reserve(n);
  impl_->list_counts.reserve(2, /*zero=*/true);
  if (detail::pipeline_layout(rows, vocab).cluster == 0)
    throw Error(ErrorCode::kUnsupported, "vocab",
                "V=" + std::to_string(vocab) + " does not fit the CUDA row layout");
  check(detail::prepare_launches(rows, vocab), "launch configuration");
  check(static_cast<int>(cudaDeviceSynchronize()), "reserve");
}

}  // namespace nextok::cuda
