// Speculative decoding: drafters propose tokens, the target model verifies
// them in one step, and the acceptance rule keeps the target's distribution.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nextok/rng.hpp"
#include "nextok/sampler.hpp"

namespace nextok {

struct Draft {
  std::vector<std::int32_t> tokens;
  // The draft model's distribution q at each position, when it has one.
  // Empty: the drafter is deterministic (q is one-hot at the proposed token).
  std::vector<Distribution> probs;
  void clear() {
    tokens.clear();
    probs.clear();
  }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Proposes at most k tokens to follow `context` (prompt, then the output).
  virtual void propose(std::span<const std::int32_t> context, std::size_t k, Draft& out) = 0;
};

// Prompt lookup: finds the most recent earlier occurrence of the context's
// trailing n-gram (longest first, max_ngram down to min_ngram) and proposes
// the tokens that followed it. Needs no second model.
class NgramDrafter final : public Drafter {
 public:
  // Throws kInvalidArgument unless 1 <= min_ngram <= max_ngram <= 64.
  explicit NgramDrafter(std::size_t max_ngram = 3, std::size_t min_ngram = 1);
  void propose(std::span<const std::int32_t> context, std::size_t k, Draft& out) override;

 private:
  std::size_t max_ngram_, min_ngram_;
};

struct SpeculativeOptions {
  Drafter* drafter = nullptr;   // null: no speculation
  std::uint32_t max_draft = 4;  // k: tokens proposed per step, 1..64
  // Temperature > 0 with speculation is refused (kInvalidArgument,
  // "speculative") unless this is set; then drafts are verified with the
  // stochastic acceptance rule instead of argmax equality.
  bool stochastic = false;
};

struct Acceptance {
  std::int32_t token;
  bool accepted;  // token == the draft token
};

// Leviathan et al. (2023): accept the draft token d with probability
// min(1, p(d) / q(d)); otherwise draw from norm(max(0, p − q)). p and q come
// from sampling_distribution (q == nullptr: one-hot at d). Uses one PCG32
// draw for the test and one more on rejection.
Acceptance accept_draft_token(const Distribution& p, const Distribution* q, std::int32_t draft,
                              Pcg32& rng);

}  // namespace nextok
