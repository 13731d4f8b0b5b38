// Stages 7-9 over a small candidate set chosen from the threshold ladder,
// shared by the full softmax pass and the bounded-tail pass (pipeline.cpp,
// bounded_tail.cpp). The top-p limit top_p·Z may be known only as an
// interval; the filters then either decide the same way at both ends (so at
// Z itself) or report kUndecided and the caller runs the full pass.
#pragma once

#include <span>

#include "backend/cpu/kernels.hpp"
#include "sampling/stages.hpp"

namespace nextok::detail {

struct TopPLimit {
  double lo = 0.0, hi = 0.0;  // lo <= top_p·Z <= hi; equal when Z is exact
};

struct FilterInputs {
  const SamplerConfig& cfg;
  stages::ActiveFilters act;
  const cpu::ExpResult& ladder;  // per-level counts, exact for levels < exact_levels
  int exact_levels;
  TopPLimit limit;
  float m = 0.0f, lse = 0.0f, inv_t = 1.0f;  // lse: mlx_lm order only
  std::span<const float> e, w;               // for the stage trace only
};

// A non-owning callable: fills ws.cand (ids, weight, key; sorted by id) with
// a ladder level's candidates (-1: every token); false when the source
// cannot list that level exactly.
class GatherLevel {
 public:
  template <class F>
  explicit GatherLevel(F& f) noexcept
      : obj_(&f), call_([](void* o, int level) { return (*static_cast<F*>(o))(level); }) {}
  bool operator()(int level) const { return call_(obj_, level); }

 private:
  void* obj_;
  bool (*call_)(void*, int);
};

enum class FilterOutcome { kDone, kUndecided };

// Leaves the survivors in ws.cand, sorted by id, with their final keys.
FilterOutcome filter_candidates(const FilterInputs& in, GatherLevel gather, Workspace::Impl& ws,
                                StageTrace* trace);

}  // namespace nextok::detail
