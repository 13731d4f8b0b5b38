#include "nextok/generation_spec.hpp"

#include <string>

#include "nextok/error.hpp"
#include "nextok/think.hpp"

namespace nextok {

GenerationPlan GenerationPlan::build(const GenerationSpec& spec, const Vocabulary& vocab,
                                     std::string_view rendered_prompt,
                                     ConstraintEngine* constraint) {
  if (spec.max_tokens < 1)
    throw Error(ErrorCode::kInvalidArgument, "max_tokens", "max_tokens must be at least 1");
  const auto v = static_cast<std::int64_t>(vocab.size());
  for (const auto& [id, bias] : spec.penalties.logit_bias) {
    if (id < 0 || id >= v) {
      throw Error(ErrorCode::kInvalidArgument, "logit_bias",
                  "logit_bias names token " + std::to_string(id) + ", outside the vocabulary (" +
                      std::to_string(v) + " ids)");
    }
  }
  spec.sampler.validate();
  spec.penalties.validate();
  GenerationPlan plan;
  GenerateOptions& o = plan.options;
  o.sampler = spec.sampler;
  o.penalties = spec.penalties;
  o.max_tokens = spec.max_tokens;
  o.stop = spec.stop;
  o.think = think_options_for(vocab, rendered_prompt, spec.thinking_budget);
  o.constraint = constraint;
  if (spec.speculation == Speculation::kNgram) {
    if (spec.max_draft < 1 || spec.max_draft > 64) {
      throw Error(ErrorCode::kInvalidArgument, "max_draft",
                  "the draft length must be between 1 and 64");
    }
    plan.drafter = std::make_unique<NgramDrafter>();
    o.speculative.drafter = plan.drafter.get();
    o.speculative.max_draft = spec.max_draft;
    o.speculative.stochastic = spec.sampler.sampling_active();
  }
  return plan;
}

}  // namespace nextok
