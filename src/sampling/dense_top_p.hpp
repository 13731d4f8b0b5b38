// Top-p over a huge nucleus (a flat row keeps most of the vocabulary) without
// a candidate list: a sample of the weights brackets the boundary, one pass
// over ws.e sums the mass above the bracket and lists the ids inside it, and
// the boundary is found among those alone (docs/semantics.md, "Huge nuclei").
#pragma once

#include <span>

#include "sampling/pipeline.hpp"
#include "sampling/stages.hpp"

namespace nextok::detail {

struct DenseTopPCounters {
  std::int64_t taken = 0;   // the cut was found in the bracket
  std::int64_t missed = 0;  // the bracket missed it (or was too wide): the list path ran
};
DenseTopPCounters& dense_top_p_counters() noexcept;

// spec order, top-p active, top-k off; e and z from the full softmax pass.
// On success sets sel (cut, dense_cut, total, last; ws.block_sums) and
// returns true; false leaves the caller to filter a candidate list.
bool try_dense_top_p(std::span<const float> e, double z, const SamplerConfig& cfg,
                     const stages::ActiveFilters& act, Workspace::Impl& ws, Selection& sel);

// Stage 11 over a dense cut: the same running sum and token as draw_sparse
// over the survivors in id order, with whole blocks skipped by their prefixes.
std::int32_t draw_cut(std::span<const float> e, std::span<const double> block_prefix,
                      const Selection& sel, float u);

}  // namespace nextok::detail
