// Host-side entry points of the CUDA kernels (kernels.cu). They only
// configure and enqueue; cuda_sampler.cpp validates everything first.
// Each returns a cudaError_t as int (0 = success).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nextok/cuda.hpp"

namespace nextok::cuda::detail {

// Throws kUnsupported for an order the GPU does not implement (mlx_lm) and
// kInvalidArgument for a value outside FilterOrder (cuda_common.cpp: every
// build).
void require_gpu_filter_order(FilterOrder order);

struct ArgmaxPartialBytes {
  static constexpr std::size_t kSize = 12;  // float value, int index, int nan
};

// Blocks per row for the split argmax.
int argmax_splits(std::int64_t rows, std::int64_t vocab) noexcept;

int launch_argmax(const void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                  const std::uint32_t* mask, int splits, void* partials, unsigned* counters,
                  std::int32_t* tokens, std::int32_t* status, void* stream) noexcept;

// How a row is spread over a thread-block cluster.
struct RowLayout {
  int cluster = 0;       // blocks per row (0: V too large for this device)
  int slice_len = 0;     // ids per block
  int per_thread = 0;    // ids per thread (odd)
  std::size_t smem = 0;  // dynamic shared memory per block
  int active = 0;        // clusters of this size the device runs at once
};
RowLayout pipeline_layout(std::int64_t rows, std::int64_t vocab) noexcept;

// Batches of at most pipeline_inline_rows() rows may pass host_params (read
// at the call, copied into the kernel arguments: no upload); so may streamed
// batches of at most stream_inline_rows() rows (the streaming kernel's
// arguments), with params then a [B] device array the kernel fills for the
// rows it leaves to the cluster kernel; otherwise host_params is null and
// params is the [B] device copy.
int pipeline_inline_rows() noexcept;
int stream_inline_rows() noexcept;  // 0 while set_stream_inline_params(false)
// Benchmark knobs (both on by default): streamed batches' params in the
// kernel arguments (off: uploaded before the launch), and the pipeline
// kernels launched as programmatic dependents (PDL: a launch starts while
// the kernel before it runs and waits for it on the device).
void set_stream_inline_params(bool on) noexcept;
bool pipeline_pdl() noexcept;
void set_pipeline_pdl(bool on) noexcept;
// Test hook (synchronous): floats in [0, 1] whose candidate-ladder level or
// scaled mass differs from counting the 16 thresholds (must be 0).
int ladder_mismatches(unsigned long long* out) noexcept;
// Batches of at least stream_min_rows() rows, some of which the streaming
// kernel can take (stream_fits), run it first; the cluster kernel then runs
// only the rows it left. set_stream_min_rows: a test and benchmark knob.
std::int64_t stream_min_rows() noexcept;
void set_stream_min_rows(std::int64_t rows) noexcept;
// Whether the streaming kernel bounds the mass of spec-order top-p rows
// from its one read (on by default); off, every such row reads twice. A
// test and benchmark knob.
bool stream_mass_bound() noexcept;
void set_stream_mass_bound(bool on) noexcept;
// Whether the streaming kernel can take a row with these params: greedy, or
// sampled with top-k (it may still leave the row: too many candidates, or
// more than 512 bias and penalty-window entries).
bool stream_fits(const RowParams& p, std::int64_t vocab) noexcept;
// Device scratch of the streaming launch: list [B]; count and done start at
// zero and the cluster kernel leaves them at zero.
struct RowList {
  std::int32_t* list = nullptr;
  unsigned* count = nullptr;
  unsigned* done = nullptr;
  bool modified = false;  // some row may have a logit bias or an active penalty
  bool mass = false;      // some row is spec-order with top-p: bound its mass in the stream
};
// k_first_rows: some row has FilterOrder::kTopKFirst with an active top-k.
// stream_list non-null: run the streaming kernel over every row, then the
// cluster kernel (layout `lay`, one wave of lay.active clusters) over the
// rows it left.
int launch_pipeline(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                    std::int64_t vocab, const RowParams* params, const RowParams* host_params,
                    bool k_first_rows, const PipelineInputs& in, RngState* rng,
                    const PipelineOutputs& out, const RowList* stream_list, void* stream) noexcept;

// Profiling hook: clock64 stamps of row 0's first block at stage boundaries.
void set_pipeline_stamps(bool on) noexcept;
int pipeline_stamps(long long* out16) noexcept;
// globaltimer ns of row 0's blocks [16][5]: entry, after load, max, bins,
// before the max exchange.
int pipeline_block_ns(unsigned long long* out80) noexcept;
// Test hook (synchronous): sampled rows per path since the last reset. Fast:
// the candidate-ladder path; radix: the full radix path; warp tail: the fast
// rows whose last stages ran on one warp (N <= 128); per filter order.
enum PathCounter : int {
  kPathFast,
  kPathRadix,
  kPathWarpTail,
  kPathKfirstFast,
  kPathKfirstRadix,
  kPathKfirstWarpTail,
  kPathStream,            // drawn by the streaming kernel
  kPathStreamWarpTail,    // ... on its one-warp tail
  kPathStreamRescan,      // ... after some thread read its part again
  kPathStreamDeferred,    // sampled rows it took up but left (no level, too many candidates)
  kPathStreamMass,        // drawn by it in the spec order with top-p, S bounded from one read
  kPathStreamMassReread,  // ... where the bound left the cut open or was off: S from a second read
  kPathStreamModified,    // drawn by it with ids that bias or penalties change
  kPathCounters
};
int pipeline_path_counts(unsigned long long (&out)[kPathCounters], bool reset) noexcept;
// Test hook (synchronous): floats t in [-inf, 0) whose exp_f32 exceeds that
// of the next float up (must be 0: the top_k_first ladder relies on it).
int exp_monotone_violations(unsigned long long* out) noexcept;

// Which logprobs kernel runs: the one-read kernel (logprobs.cuh, the
// default: 3-5x faster at B >= 64 on H100) or the cluster kernel
// (logprobs_cluster.cuh; the tests and the benchmark run both).
bool logprobs_one_read() noexcept;
void set_logprobs_one_read(bool on) noexcept;
RowLayout logprobs_cluster_layout(std::int64_t rows, std::int64_t vocab) noexcept;
int launch_logprobs_cluster(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                            std::int64_t vocab, const std::uint32_t* k, const std::int32_t* chosen,
                            const LogprobsOutputs& out, void* stream) noexcept;

// Blocks per row of the one-read logprobs kernel, and the scratch each one writes
// (the partials are [rows, logprobs_splits(rows, vocab)]; logprobs_splits is
// largest at rows = 1 and for bf16).
int logprobs_splits(std::int64_t rows, std::int64_t vocab, bool bf16) noexcept;
// The one-read kernel's target blocks per SM (0, the default: 1 for f32, 2
// for bf16); a benchmark knob.
void set_logprobs_blocks_per_sm(int n) noexcept;
std::size_t logprobs_part_bytes() noexcept;
// k [rows] in device memory; counters [rows] zero (left zero).
int launch_logprobs(const void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                    int splits, const std::uint32_t* k, const std::int32_t* chosen, void* parts,
                    unsigned* counters, const LogprobsOutputs& out, void* stream) noexcept;

// logits[b, i] = -inf where bit i of mask row b (words_per_row words apart)
// is clear.
int launch_apply_bitmask(void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                         const std::uint32_t* mask, std::int64_t words_per_row,
                         void* stream) noexcept;

// Settles every launch configuration for V (layouts, kernel attributes), so
// later launches make no driver query: a CUDA graph can capture them.
int prepare_launches(std::int64_t rows, std::int64_t vocab) noexcept;

}  // namespace nextok::cuda::detail
