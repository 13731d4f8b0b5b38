// A deliberately plain implementation of stages 7-11 that sorts the whole
// vocabulary, written straight from the rules in docs/semantics.md. It is
// the oracle for the fast path and the `full-sort` benchmark baseline.
#pragma once

#include "nextok/sampler.hpp"

namespace nextok::reference {

Distribution full_sort_distribution(const StepInput& in, const SamplerConfig& cfg,
                                    const PenaltyConfig& pen, Workspace& ws);
std::int32_t full_sort_sample(const StepInput& in, const SamplerConfig& cfg,
                              const PenaltyConfig& pen, Pcg32& rng, Workspace& ws);

}  // namespace nextok::reference
