// The sampling pipeline: greedy paths, the 11-stage host path, and the
// post-pipeline distribution shared with speculative verification.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nextok/config.hpp"
#include "nextok/logits.hpp"
#include "nextok/logprobs.hpp"
#include "nextok/rng.hpp"

namespace nextok {

// Reusable scratch memory. One per request (or per thread); after the first
// step at a given V no call allocates.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  struct Impl;
  Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Everything one decode step needs besides the configs.
struct StepInput {
  LogitsView logits;                      // must be a single row [1, V]
  std::span<const std::uint32_t> mask;    // empty = unconstrained
  std::span<const std::int32_t> history;  // generated tokens, oldest first
};

// The sparse post-pipeline distribution: ids ascending, probs summing to ~1.
struct Distribution {
  std::vector<std::int32_t> ids;
  std::vector<float> probs;
  // Writes the dense [V] vector (zeros elsewhere). dense.size() must be V.
  void to_dense(std::span<float> dense) const;
};

// Survivor counts after each stage, for `nextok explain`.
struct StageTrace {
  struct Stage {
    const char* name;
    std::int64_t survivors;
  };
  std::vector<Stage> stages;
};

// ---- greedy ----------------------------------------------------------------
// Index of the largest logit; ties go to the lowest index. NaN anywhere throws
// kNanLogits; a row with no logit above -Inf throws kNoViableToken.
std::int32_t argmax(const LogitsView& row);
// argmax per row of a [B, V] view into out[B].
void argmax_rows(const LogitsView& logits, std::span<std::int32_t> out);
// argmax restricted to tokens whose mask bit is set.
std::int32_t apply_mask_argmax(const LogitsView& row, std::span<const std::uint32_t> mask);
// Greedy with stages 1–5 (mask, bias, penalties) applied first.
std::int32_t argmax_with_penalties(const StepInput& in, const PenaltyConfig& penalties,
                                   Workspace& ws);

// ---- host path ---------------------------------------------------------------
// Stages 1–11. With temperature == 0 this is the greedy path of the same
// inputs (no random draw). `trace` may be null.
std::int32_t sample_token(const StepInput& in, const SamplerConfig& config,
                          const PenaltyConfig& penalties, Pcg32& rng, Workspace& ws,
                          StageTrace* trace = nullptr);

// Stages 1–10: the distribution sample_token draws from. With temperature == 0
// it is the one-hot greedy choice.
Distribution sampling_distribution(const StepInput& in, const SamplerConfig& config,
                                   const PenaltyConfig& penalties, Workspace& ws,
                                   StageTrace* trace = nullptr);

// ---- per-request sampler ------------------------------------------------------
struct StepResult {
  std::int32_t token = 0;
  std::optional<TokenLogprobs> logprobs;  // set when top_logprobs_k > 0
};

// Per-request state: the configs, the PCG32 stream seeded from
// seed_or_default(), the penalty window and the scratch memory. Picks the
// cheapest path each step: plain argmax when nothing else is on.
class Sampler {
 public:
  // Validates both configs (throws kInvalidArgument).
  Sampler(SamplerConfig config, PenaltyConfig penalties);

  // Chooses the next token from one [1, V] row and records it in the window.
  StepResult next(const LogitsView& row, std::span<const std::uint32_t> mask = {});
  // The distribution next() would draw from for this row (stages 1–10, with
  // the current penalty window). Records nothing.
  Distribution distribution(const LogitsView& row, std::span<const std::uint32_t> mask = {});
  // Records a token chosen elsewhere (a forced or prompt token) in the window.
  void accept(std::int32_t token);

  const SamplerConfig& config() const noexcept { return config_; }
  const PenaltyConfig& penalties() const noexcept { return penalties_; }
  std::span<const std::int32_t> history() const noexcept { return history_; }
  Pcg32& rng() noexcept { return rng_; }

 private:
  SamplerConfig config_;
  PenaltyConfig penalties_;
  Pcg32 rng_;
  std::vector<std::int32_t> history_;  // at most penalties_.window tokens
  Workspace ws_;
};

}  // namespace nextok
