// The pipeline stages, one file each. Pure functions over spans and the
// workspace; the orchestration lives in pipeline.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "backend/cpu/kernels.hpp"
#include "nextok/config.hpp"
#include "nextok/sampler.hpp"
#include "sampling/workspace.hpp"

namespace nextok::stages {

// Throws kShapeMismatch / kUnsupported unless v is a single CPU row [1, V].
void require_single_row(const LogitsView& v);

// Which of stages 7-9 do anything for this config and vocabulary size.
struct ActiveFilters {
  bool top_p, min_p, top_k;
  bool any() const { return top_p || min_p || top_k; }
};
ActiveFilters active_filters(const SamplerConfig& c, std::int64_t vocab);

// Throws kMaskSizeMismatch unless mask is empty or has ceil(V/32) words.
void check_mask_size(std::span<const std::uint32_t> mask, std::int64_t vocab);
[[noreturn]] void throw_nan();

// Stage 1: convert the row to float32 into ws.w with forbidden tokens at -Inf.
// Throws kNanLogits (NaN anywhere in the row) and kMaskSizeMismatch.
void load_masked(const StepInput& in, Workspace::Impl& ws);

// Stages 2-5: logit_bias, repetition, presence, frequency, on ws.w.
// `on_stage` (may be null) is called after each stage with its name.
using StageHook = void (*)(void* ctx, const char* name);
void apply_penalties(std::span<float> w, const PenaltyConfig& pen,
                     std::span<const std::int32_t> history, FilterOrder order,
                     Workspace::Impl& ws, StageHook hook = nullptr, void* ctx = nullptr);

// Max of ws.w with the errors every probability path shares: kNoViableToken
// when nothing is above -Inf, kNonFiniteLogits on +Inf.
float checked_max(std::span<const float> w);
// The same checks on a max computed elsewhere; returns m.
float check_max(float m);

// How many of x are >= threshold (the stage trace's survivor counts).
inline std::int64_t count_ge(std::span<const float> x, float threshold) {
  std::int64_t n = 0;
  for (float v : x) n += v >= threshold ? 1 : 0;
  return n;
}

// Ladder thresholds on the weight e used to pick a small candidate set.
std::span<const float> ladder_thresholds() noexcept;

// Stage 7-9 helpers over a candidate list sorted by id. Each keeps the
// survivors in place, still sorted by id; see docs/semantics.md.
enum class TiePolicy { kIndexOrder, kKeepAllTies };
// Top-p: keep tokens whose mass strictly above them (in order key desc,
// ties by id desc) is < limit. kKeepAllTies keeps the whole boundary tie group.
void filter_top_p(std::vector<Candidate>& c, double limit, TiePolicy ties, Workspace::Impl& ws);
// Top-k: keep the k largest keys; ties go to the lowest ids.
void filter_top_k(std::vector<Candidate>& c, std::int64_t k, Workspace::Impl& ws);
// Remove candidates with key < threshold.
void filter_below(std::vector<Candidate>& c, float threshold);

// Stage 11 over a sparse survivor list sorted by id (weights unnormalised).
std::int32_t draw_sparse(std::span<const Candidate> survivors, double total, float u);
// Stage 11 over dense weights with per-kSumBlock sums.
std::int32_t draw_dense(std::span<const float> e, std::span<const double> block_sums,
                        double total, float u);

}  // namespace nextok::stages
