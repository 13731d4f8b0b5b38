// The fast pipeline against the full-sort reference on one step: the same
// distribution (ids and probability bits) and the same draws for seeds
// first_seed .. first_seed + draws - 1.
#pragma once

#include <gtest/gtest.h>

#include "nextok/sampler.hpp"
#include "reference/full_sort.hpp"

namespace nextok::test {

inline void expect_same_as_reference(const StepInput& in, const SamplerConfig& cfg,
                                     const PenaltyConfig& pen, Workspace& ws, Workspace& ws_ref,
                                     int first_seed, int draws) {
  const Distribution fast = sampling_distribution(in, cfg, pen, ws);
  const Distribution ref = reference::full_sort_distribution(in, cfg, pen, ws_ref);
  ASSERT_EQ(fast.ids, ref.ids) << "T=" << cfg.temperature << " top_p=" << cfg.top_p
                               << " top_k=" << cfg.top_k << " min_p=" << cfg.min_p
                               << " |fast|=" << fast.ids.size() << " |ref|=" << ref.ids.size();
  ASSERT_EQ(fast.probs, ref.probs);
  for (int s = first_seed; s < first_seed + draws; ++s) {
    Pcg32 r1 = Pcg32::for_seed(static_cast<std::uint64_t>(s));
    Pcg32 r2 = Pcg32::for_seed(static_cast<std::uint64_t>(s));
    ASSERT_EQ(sample_token(in, cfg, pen, r1, ws),
              reference::full_sort_sample(in, cfg, pen, r2, ws_ref))
        << "seed " << s;
  }
}

}  // namespace nextok::test
