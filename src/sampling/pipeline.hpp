#pragma once

#include "nextok/sampler.hpp"
#include "sampling/workspace.hpp"

namespace nextok::detail {

// Survivors of a huge nucleus, described by a cut on ws.e instead of a list:
// e > above, or e == above with id >= tie_from; and e >= floor (min-p).
struct DenseCut {
  float above = 0.0f;
  std::int32_t tie_from = 0;
  float floor = 0.0f;
  bool keeps(float e, std::int32_t id) const noexcept {
    return (e > above || (e == above && id >= tie_from)) && e >= floor;
  }
};

// What stages 1-10 leave behind.
struct Selection {
  std::int32_t greedy = -1;  // temperature == 0: the argmax, nothing else is set
  bool dense = false;        // survivors are every token, weights in ws.e / ws.block_sums
  bool cut = false;          // survivors are `dense_cut` over ws.e; ws.block_sums holds the
                             // running sum before each block, `last` the last survivor
  DenseCut dense_cut;
  std::int32_t last = -1;
  double total = 0.0;  // sum of survivor weights (sparse: ws.cand, sorted by id)
};

Selection run_pipeline(const StepInput& in, const SamplerConfig& cfg, const PenaltyConfig& pen,
                       Workspace::Impl& ws, StageTrace* trace);

}  // namespace nextok::detail
