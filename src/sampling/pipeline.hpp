#pragma once

#include "nextok/sampler.hpp"
#include "sampling/workspace.hpp"

namespace nextok::detail {

// What stages 1-10 leave behind.
struct Selection {
  std::int32_t greedy = -1;  // temperature == 0: the argmax, nothing else is set
  bool dense = false;        // survivors are every token, weights in ws.e / ws.block_sums
  double total = 0.0;        // sum of survivor weights (sparse: ws.cand, sorted by id)
};

Selection run_pipeline(const StepInput& in, const SamplerConfig& cfg, const PenaltyConfig& pen,
                       Workspace::Impl& ws, StageTrace* trace);

}  // namespace nextok::detail
