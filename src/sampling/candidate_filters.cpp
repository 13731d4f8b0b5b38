#include "sampling/candidate_filters.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace nextok::detail {
namespace {

using stages::TiePolicy;

// Whether the candidates of a ladder level provably contain every survivor
// of top-k or min-p.
bool covers_top_k_or_min_p(const FilterInputs& in, int level) {
  const auto j = static_cast<std::size_t>(level);
  const SamplerConfig& c = in.cfg;
  // mlx_lm compares rounded log-probs; the 0.1% room covers that rounding.
  const float min_p_room = c.filter_order != FilterOrder::kMlxLm ? c.min_p : c.min_p * 0.999f;
  return (in.act.top_k && in.ladder.count[j] >= c.top_k) ||
         (in.act.min_p && stages::ladder_thresholds()[j] <= min_p_room);
}

// Smallest ladder level from `from` that covers top-k or min-p, or that may
// cover top-p (checked after the gather from the candidates' exact mass, see
// top_p_contained); -1 means every token is a candidate.
int choose_level(const FilterInputs& in, int from) {
  const auto& count = in.ladder.count;
  if (in.cfg.filter_order == FilterOrder::kTopKFirst && in.act.top_k) {
    // Top-k runs first, on every token: the candidates must hold the whole
    // top-k set (top-p's limit is its mass).
    for (int j = from; j < cpu::kLadderLevels; ++j)
      if (count[static_cast<std::size_t>(j)] >= in.cfg.top_k) return j;
    return -1;
  }
  for (int j = from; j < cpu::kLadderLevels; ++j) {
    if (covers_top_k_or_min_p(in, j)) return j;
    if (in.act.top_p && count[static_cast<std::size_t>(j)] > 0) return j;  // verified after gather
  }
  return -1;
}

enum class Contains { kYes, kNo, kUndecided };

// Every token outside the candidates has at least their whole mass above it,
// so once that mass reaches the limit none of them survives top-p.
Contains top_p_contained(const std::vector<Candidate>& c, TopPLimit limit) {
  // Four partial sums: one chain of dependent adds cost ~1.5 ns a candidate
  // (a flat row gathers all of them).
  std::array<double, 4> mass{};
  std::size_t i = 0;
  for (; i + 4 <= c.size(); i += 4)
    for (std::size_t l = 0; l < 4; ++l) mass[l] += static_cast<double>(c[i + l].weight);
  for (; i < c.size(); ++i) mass[0] += static_cast<double>(c[i].weight);
  const double total = (mass[0] + mass[1]) + (mass[2] + mass[3]);
  if (total >= limit.hi) return Contains::kYes;
  if (total < limit.lo) return Contains::kNo;
  return Contains::kUndecided;
}

// Top-p at a limit known within [lo, hi]: the survivors only grow with the
// limit, so equal counts at both ends mean the same survivors at top_p·Z.
bool filter_top_p_bounded(std::vector<Candidate>& c, TopPLimit limit, TiePolicy ties,
                          Workspace::Impl& ws) {
  if (limit.lo == limit.hi) {
    stages::filter_top_p(c, limit.lo, ties, ws);
    return true;
  }
  std::vector<Candidate> at_hi = c;
  stages::filter_top_p(at_hi, limit.hi, ties, ws);
  stages::filter_top_p(c, limit.lo, ties, ws);
  return at_hi.size() == c.size();
}

}  // namespace

FilterOutcome filter_candidates(const FilterInputs& in, GatherLevel gather, Workspace::Impl& ws,
                                StageTrace* trace) {
  const SamplerConfig& cfg = in.cfg;
  const stages::ActiveFilters& act = in.act;
  const bool spec = cfg.filter_order != FilterOrder::kMlxLm;
  const bool k_first = cfg.filter_order == FilterOrder::kTopKFirst && act.top_k;
  auto add = [trace](const char* name, std::int64_t survivors) {
    if (trace != nullptr) trace->stages.push_back({name, survivors});
  };

  for (int level = choose_level(in, 0);;) {
    if ((level >= in.exact_levels) || !gather(level)) return FilterOutcome::kUndecided;
    if (level >= 0 && !k_first && !covers_top_k_or_min_p(in, level)) {
      const Contains c = top_p_contained(ws.cand, in.limit);
      if (c == Contains::kUndecided) return FilterOutcome::kUndecided;
      if (c == Contains::kNo) {
        level = choose_level(in, level + 1);
        continue;
      }
    }
    if (trace != nullptr) {
      add(spec ? "temperature_softmax" : "log_softmax",
          spec ? stages::count_ge(in.e, std::numeric_limits<float>::denorm_min())
               : stages::count_ge(in.w, -std::numeric_limits<float>::max()));
    }
    auto count_or_all = [&](bool on) -> std::int64_t {
      if (on || trace == nullptr) return static_cast<std::int64_t>(ws.cand.size());
      return trace->stages.back().survivors;
    };
    if (k_first) {
      // Top-k, then top-p against the mass of the top-k set, then min-p.
      stages::filter_top_k(ws.cand, cfg.top_k, ws);
      add("top_k", count_or_all(true));
      if (act.top_p) {
        double mass_k = 0.0;
        for (const Candidate& c : ws.cand) mass_k += static_cast<double>(c.weight);
        stages::filter_top_p(ws.cand, static_cast<double>(cfg.top_p) * mass_k,
                             TiePolicy::kIndexOrder, ws);
      }
      add("top_p", count_or_all(act.top_p));
      if (act.min_p) stages::filter_below(ws.cand, cfg.min_p);
      add("min_p", count_or_all(act.min_p));
      return FilterOutcome::kDone;
    }
    if (act.top_p &&
        !filter_top_p_bounded(ws.cand, in.limit,
                              spec ? TiePolicy::kIndexOrder : TiePolicy::kKeepAllTies, ws)) {
      return FilterOutcome::kUndecided;
    }
    add("top_p", count_or_all(act.top_p));
    if (act.min_p) {
      if (spec) {
        stages::filter_below(ws.cand, cfg.min_p);  // e_max == 1 exactly
      } else {
        const float top = in.m - in.lse;
        const auto log_min_p = static_cast<float>(std::log(static_cast<double>(cfg.min_p)));
        stages::filter_below(ws.cand, top + log_min_p);
      }
    }
    add("min_p", count_or_all(act.min_p));
    if (act.top_k) stages::filter_top_k(ws.cand, cfg.top_k, ws);
    add("top_k", count_or_all(act.top_k));

    // mlx_lm keys are rounded log-probs; two distinct logits can share one.
    // If the smallest survivor sits near the ladder cut, a token outside the
    // candidate set could tie it: redo with the next level.
    if (!spec && level >= 0) {
      float min_key = std::numeric_limits<float>::infinity();
      for (const Candidate& c : ws.cand) min_key = std::min(min_key, c.key);
      const double cut = std::log(static_cast<double>(
                             stages::ladder_thresholds()[static_cast<std::size_t>(level)])) +
                         static_cast<double>(in.m) - static_cast<double>(in.lse);
      if (static_cast<double>(min_key) <=
          cut + 1e-3 + 1e-6 * std::fabs(static_cast<double>(in.lse))) {
        level = level + 1 < cpu::kLadderLevels ? level + 1 : -1;
        if (trace != nullptr) trace->stages.resize(trace->stages.size() - 4);
        continue;
      }
    }
    return FilterOutcome::kDone;
  }
}

}  // namespace nextok::detail
