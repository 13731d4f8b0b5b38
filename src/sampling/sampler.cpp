// nextok::Sampler: the per-request wrapper that picks the cheapest path.
#include "nextok/sampler.hpp"

namespace nextok {

Sampler::Sampler(SamplerConfig config, PenaltyConfig penalties)
    : config_(config),
      penalties_(std::move(penalties)),
      rng_(Pcg32::for_seed(config.seed_or_default())) {
  config_.validate();
  penalties_.validate();
}

StepResult Sampler::next(const LogitsView& row, std::span<const std::uint32_t> mask) {
  StepResult r;
  if (!config_.sampling_active() && !penalties_.penalties_active()) {
    r.token = mask.empty() ? argmax(row) : apply_mask_argmax(row, mask);
  } else {
    const StepInput in{row, mask, history_};
    r.token = config_.sampling_active() ? sample_token(in, config_, penalties_, rng_, ws_)
                                        : argmax_with_penalties(in, penalties_, ws_);
  }
  if (config_.top_logprobs_k > 0)
    r.logprobs = compute_top_logprobs(row, r.token, config_.top_logprobs_k);
  accept(r.token);
  return r;
}

Distribution Sampler::distribution(const LogitsView& row, std::span<const std::uint32_t> mask) {
  const StepInput in{row, mask, history_};
  return sampling_distribution(in, config_, penalties_, ws_);
}

void Sampler::accept(std::int32_t token) {
  if (penalties_.window == 0) return;
  if (history_.size() == penalties_.window) history_.erase(history_.begin());
  history_.push_back(token);
}

}  // namespace nextok
