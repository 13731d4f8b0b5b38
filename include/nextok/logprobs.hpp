// Per-step logprobs from the raw model logits (OpenAI semantics).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nextok/logits.hpp"

namespace nextok {

struct TokenLogprob {
  std::int32_t token_id;
  float logprob;
};

struct TokenLogprobs {
  std::int32_t token_id = 0;  // the chosen token
  float token_logprob = 0.0f;
  std::vector<TokenLogprob> top;  // k entries, descending; ties by lower id
};

// log-softmax of the raw logits row; the k most likely tokens, descending,
// plus the chosen token's logprob. k == 0 returns nullopt without touching
// the logits. k > kMaxTopLogprobs throws kInvalidArgument.
std::optional<TokenLogprobs> compute_top_logprobs(const LogitsView& row, std::int32_t chosen,
                                                  std::uint32_t k);

}  // namespace nextok
