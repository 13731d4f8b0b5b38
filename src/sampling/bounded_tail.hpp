// The bounded-tail pass for the spec and top_k_first orders: the softmax
// over the few tokens near the max only, with the rest of Z bounded
// (docs/semantics.md, "Skipping the tail"). Exact or declined, never
// approximate.
#pragma once

#include <span>

#include "sampling/pipeline.hpp"
#include "sampling/stages.hpp"

namespace nextok::detail {

// How often the pass ran and how often it handed back to the full pass; per
// thread, for tests and benchmarks.
struct BoundedTailCounters {
  std::int64_t decided = 0;    // the pass produced the selection
  std::int64_t undecided = 0;  // ran, but a decision needed the exact Z
  std::int64_t declined = 0;   // too many tokens near the max to gain
};
BoundedTailCounters& bounded_tail_counters() noexcept;

// On success leaves the survivors in ws.cand and returns true with sel set;
// false leaves the caller to run the full pass (ws.cand is clobbered).
bool try_bounded_tail(std::span<const float> w, float m, float inv_t, const SamplerConfig& cfg,
                      const stages::ActiveFilters& act, Workspace::Impl& ws, Selection& sel);

}  // namespace nextok::detail
