// SamplerConfig and PenaltyConfig: the per-request sampling parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace nextok {

inline constexpr std::uint64_t kDefaultSeed = 0xA7A7;
inline constexpr std::uint32_t kMaxTopLogprobs = 20;
inline constexpr std::uint32_t kDefaultPenaltyWindow = 20;
// Temperatures below this are greedy, as in vLLM (_SAMPLING_EPS): dividing
// logits by a tinier temperature overflows float (1/1e-40 is +inf) and the
// draw would be an argmax anyway.
inline constexpr float kGreedyTemperature = 1e-5f;

// Where temperature sits relative to the top-p/min-p/top-k filters.
//  kSpec:  temperature + softmax, then the filters on those probabilities.
//  kMlxLm: the filters on temperature-1 log-probabilities, temperature only
//          at the draw (exactly what mlx-lm's make_sampler does).
//  kTopKFirst: as kSpec, but top-k first, then top-p on the renormalised
//          top-k set, then min-p (the order of vLLM's sampler and of
//          FlashInfer's default "top_k_first").
enum class FilterOrder : std::uint8_t { kSpec, kMlxLm, kTopKFirst };

const char* filter_order_name(FilterOrder order) noexcept;
// Parses "spec", "mlx_lm" or "top_k_first"; throws kInvalidArgument otherwise.
FilterOrder parse_filter_order(const char* text);

struct SamplerConfig {
  float temperature = 0.0f;  // < kGreedyTemperature (0 included) = greedy
  float top_p = 1.0f;        // active when 0 < top_p < 1; 0 and >= 1 are off
  std::int32_t top_k = 0;    // active when 0 < top_k < V
  float min_p = 0.0f;        // active when min_p > 0
  std::optional<std::uint64_t> seed;
  std::uint32_t top_logprobs_k = 0;  // 0 = no logprob work at all
  FilterOrder filter_order = FilterOrder::kSpec;

  std::uint64_t seed_or_default() const noexcept { return seed.value_or(kDefaultSeed); }
  bool sampling_active() const noexcept { return temperature >= kGreedyTemperature; }
  // Throws Error{kInvalidArgument, param} naming the first bad field.
  void validate() const;
};

struct PenaltyConfig {
  float repetition_penalty = 1.0f;  // > 0; 1 = off
  float presence_penalty = 0.0f;    // 0 = off
  float frequency_penalty = 0.0f;   // 0 = off
  // (token id, additive bias). Ids outside [0, V) are skipped at apply time.
  // A bias of -Inf bans the token.
  std::vector<std::pair<std::int32_t, float>> logit_bias;
  std::uint32_t window = kDefaultPenaltyWindow;  // trailing tokens penalised

  bool penalties_active() const noexcept {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f ||
           !logit_bias.empty();
  }
  void validate() const;
};

}  // namespace nextok
