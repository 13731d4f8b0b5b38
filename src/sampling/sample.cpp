// Public entry points of the host path: sample_token, sampling_distribution.
#include "nextok/error.hpp"
#include "sampling/dense_top_p.hpp"
#include "sampling/pipeline.hpp"
#include "sampling/stages.hpp"

namespace nextok {

std::int32_t sample_token(const StepInput& in, const SamplerConfig& config,
                          const PenaltyConfig& penalties, Pcg32& rng, Workspace& ws,
                          StageTrace* trace) {
  auto& w = ws.impl();
  const detail::Selection sel = detail::run_pipeline(in, config, penalties, w, trace);
  if (sel.greedy >= 0) return sel.greedy;
  const float u = rng.next_f32();
  const std::span<const float> e(w.e.data(), static_cast<std::size_t>(in.logits.vocab));
  const std::int32_t token = sel.dense ? stages::draw_dense(e, w.block_sums, sel.total, u)
                             : sel.cut ? detail::draw_cut(e, w.block_sums, sel, u)
                                       : stages::draw_sparse(w.cand, sel.total, u);
  if (token < 0)
    throw Error(ErrorCode::kNoViableToken, "logits",
                "every token has zero probability after filtering");
  if (trace != nullptr) trace->stages.push_back({"sample", 1});
  return token;
}

Distribution sampling_distribution(const StepInput& in, const SamplerConfig& config,
                                   const PenaltyConfig& penalties, Workspace& ws,
                                   StageTrace* trace) {
  auto& w = ws.impl();
  const detail::Selection sel = detail::run_pipeline(in, config, penalties, w, trace);
  Distribution d;
  if (sel.greedy >= 0) {
    d.ids.push_back(sel.greedy);
    d.probs.push_back(1.0f);
    return d;
  }
  auto push = [&](std::int32_t id, float weight) {
    if (weight > 0.0f) {
      d.ids.push_back(id);
      d.probs.push_back(static_cast<float>(static_cast<double>(weight) / sel.total));
    }
  };
  if (sel.dense) {
    for (std::int64_t i = 0; i < in.logits.vocab; ++i)
      push(static_cast<std::int32_t>(i), w.e[static_cast<std::size_t>(i)]);
  } else if (sel.cut) {
    for (std::int64_t i = 0; i < in.logits.vocab; ++i) {
      const float x = w.e[static_cast<std::size_t>(i)];
      if (sel.dense_cut.keeps(x, static_cast<std::int32_t>(i)))
        push(static_cast<std::int32_t>(i), x);
    }
  } else {
    for (const Candidate& c : w.cand) push(c.id, c.weight);
  }
  return d;
}

}  // namespace nextok
