// What a caller asks of one generation, before anything is built: the CLI's
// flags and the server's request body both become a GenerationSpec, and
// GenerationPlan::build turns it into GenerateOptions one way for both
// (validation, think routing, speculation).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/config.hpp"
#include "nextok/generate.hpp"
#include "nextok/speculative.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

enum class Speculation : std::uint8_t {
  kOff,
  kNgram,  // prompt lookup; with temperature > 0, stochastic verification
};

struct GenerationSpec {
  SamplerConfig sampler;
  PenaltyConfig penalties;
  std::uint32_t max_tokens = 256;
  std::vector<std::string> stop;
  std::optional<std::uint32_t> thinking_budget;
  Speculation speculation = Speculation::kOff;
  std::uint32_t max_draft = 4;
};

// GenerateOptions and what they point at, owned together (moving a plan
// keeps the pointers valid).
struct GenerationPlan {
  GenerateOptions options;
  std::unique_ptr<Drafter> drafter;

  // Checks the spec against the vocabulary (sampler and penalty ranges,
  // logit_bias ids, think markers for a budget, draft length) and fills the
  // options. Speculation with temperature > 0 verifies drafts with the
  // stochastic acceptance rule, so the output keeps the sampled
  // distribution. `constraint` (may be null) is the caller's. Throws
  // Error{kInvalidArgument} naming the parameter.
  static GenerationPlan build(const GenerationSpec& spec, const Vocabulary& vocab,
                              std::string_view rendered_prompt, ConstraintEngine* constraint);
};

}  // namespace nextok
