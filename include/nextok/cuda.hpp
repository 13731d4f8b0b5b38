// CUDA backend: greedy, masked greedy, the full sampling pipeline and top-k
// logprobs over a batch of [B, V] logits in device memory (docs/cuda.md).
//
// Every pointer argument below is device memory unless it says otherwise.
// Calls validate shapes and per-row configs on the host, enqueue on the view's
// stream and return without synchronising. Per-row failures (NaN, nothing
// viable) are written to a device status array, never thrown: one bad request
// must not fail the whole batch. Built without CUDA (NEXTOK_CUDA=OFF) every
// call throws Error{kUnsupported}.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "nextok/config.hpp"
#include "nextok/error.hpp"
#include "nextok/logits.hpp"
#include "nextok/rng.hpp"

namespace nextok::cuda {

// Per-row outcome, written next to the token. A row with a non-zero status
// has token -1.
enum class RowStatus : std::int32_t {
  kOk = 0,
  kNanLogits = 1,        // a NaN anywhere in the row (masked or not)
  kNoViableToken = 2,    // every token masked, banned or -inf
  kNonFiniteLogits = 3,  // +inf where a probability must be formed
  kBadHistory = 4,       // a history id outside [0, V)
  kInvalidParams = 5,    // device-resident params or k that the host would refuse
};

// The ErrorCode the host path throws for the same input (kOk has none).
ErrorCode row_status_error(RowStatus s) noexcept;

// True when this build has the CUDA backend.
bool built_with_cuda() noexcept;
// True when built with CUDA and at least one device is usable.
bool device_available() noexcept;

// Sampling parameters of one row; the host fills one per request each step.
// filter_order kSpec or kTopKFirst (mlx_lm order is host-only for now).
struct RowParams {
  float temperature = 0.0f;  // 0 = greedy; (0, kGreedyTemperature) is an error here
  float top_p = 1.0f;        // active when 0 < top_p < 1
  std::int32_t top_k = 0;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::uint32_t window = kDefaultPenaltyWindow;
  FilterOrder filter_order = FilterOrder::kSpec;  // kSpec or kTopKFirst

  // Throws kUnsupported for FilterOrder::kMlxLm (host-only for now).
  static RowParams from(const SamplerConfig& c, const PenaltyConfig& p);
};

// One PCG32 generator per row, device-resident so a captured CUDA graph
// replays with fresh draws. Seed with Pcg32::for_seed(seed) on the host.
struct RngState {
  std::uint64_t state;
  std::uint64_t inc;
  static RngState from(const Pcg32& g) noexcept { return {g.state(), g.inc()}; }
};

// Optional per-row inputs of the pipeline.
struct PipelineInputs {
  // [B, ceil(V/32)] uint32 bitmask, or null (no constraint).
  const std::uint32_t* mask = nullptr;
  // Token history [B, history_stride], oldest first, history_len[b] valid
  // entries in row b; the trailing `window` of them are penalised.
  const std::int32_t* history = nullptr;
  const std::int32_t* history_len = nullptr;
  std::int32_t history_stride = 0;
  // logit_bias in CSR form: row b owns entries [bias_offsets[b], bias_offsets[b+1]).
  const std::int32_t* bias_offsets = nullptr;
  const std::int32_t* bias_ids = nullptr;
  const float* bias_values = nullptr;
};

// Outputs of sample(); tokens and status are [B].
struct PipelineOutputs {
  std::int32_t* tokens = nullptr;
  std::int32_t* status = nullptr;
  // Optional [B, V]: the post-filter distribution (p = e / S on survivors,
  // 0 elsewhere; one-hot for greedy rows). Costs a full write; tests and
  // speculative verification use it.
  float* probs = nullptr;
};

// Top-k logprobs outputs: ids/logprobs [B, kMaxTopLogprobs] (descending,
// ties by lower id), count [B] listed entries, chosen_logprob [B].
struct LogprobsOutputs {
  std::int32_t* ids = nullptr;
  float* logprobs = nullptr;
  std::int32_t* count = nullptr;
  float* chosen_logprob = nullptr;
  std::int32_t* status = nullptr;
};

// Device scratch and per-row parameter staging, reused across calls. Not
// thread-safe; one per stream.
class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // argmax over each row, ties to the lowest index; with `mask` only allowed
  // tokens count (the bitmask is read directly). +inf is a valid argmax.
  void argmax(const LogitsView& logits, const std::uint32_t* mask, std::int32_t* tokens,
              std::int32_t* status);

  // Stages 1-11 of docs/semantics.md (spec order) per row, with per-row
  // params (host memory, validated here) and per-row generators `rng` [B]
  // (device; advanced by one draw on each row with temperature > 0).
  void sample(const LogitsView& logits, std::span<const RowParams> params, const PipelineInputs& in,
              RngState* rng, const PipelineOutputs& out);

  // log-softmax of the raw logits; the k[b] <= 20 best per row (k host
  // memory, [B]) and the logprob of chosen[b] (device, [B]).
  void top_logprobs(const LogitsView& logits, std::span<const std::uint32_t> k,
                    const std::int32_t* chosen, const LogprobsOutputs& out);

  // logits[b, i] = -inf wherever bit i of mask row b is clear, in place on
  // `stream` (f32 or bf16 [rows, vocab]; mask rows words_per_row >=
  // ceil(V/32) words apart): what apply_token_bitmask_inplace does in the
  // engines that sample after masking.
  void apply_token_bitmask(void* logits, DType dtype, std::int64_t rows, std::int64_t vocab,
                           const std::uint32_t* mask, std::int64_t words_per_row, void* stream);

  // CUDA graphs. reserve() allocates the scratch of every call for batches
  // of up to `rows` rows of `vocab` ids and settles their launch
  // configurations (synchronises the device). After it, argmax(),
  // sample_device_params() and top_logprobs_device_k() on at most that
  // shape allocate nothing, copy nothing from the host and never
  // synchronise, so they can be captured (cudaStreamBeginCapture) and
  // replayed; every input they read (logits, params, k, rng, mask, history)
  // is read at replay. (sample() with <= 16 rows is capturable too, but its
  // params are frozen into the graph; top_logprobs() uploads k.)
  void reserve(std::int64_t rows, std::int64_t vocab);
  // sample() with the per-row params [B] in device memory. They are
  // checked on the device: a row the host would refuse gets token -1 and
  // RowStatus::kInvalidParams; the other rows are unaffected.
  void sample_device_params(const LogitsView& logits, const RowParams* params,
                            const PipelineInputs& in, RngState* rng, const PipelineOutputs& out);
  // top_logprobs() with k [B] in device memory (k > 20: kInvalidParams).
  void top_logprobs_device_k(const LogitsView& logits, const std::uint32_t* k,
                             const std::int32_t* chosen, const LogprobsOutputs& out);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nextok::cuda
