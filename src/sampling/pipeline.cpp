// Orchestrates stages 1-11 for every filter order. The filters work on a
// small candidate set chosen from a threshold ladder computed in the same
// pass as the softmax; the result is exact (see docs/semantics.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "backend/cpu/exp_f32.hpp"
#include "nextok/error.hpp"
#include "sampling/pipeline.hpp"
#include "sampling/stages.hpp"

namespace nextok::detail {
namespace {

using stages::TiePolicy;

using Active = stages::ActiveFilters;

std::int64_t count_ge(std::span<const float> x, float threshold) {
  return static_cast<std::int64_t>(
      std::count_if(x.begin(), x.end(), [threshold](float v) { return v >= threshold; }));
}

struct Tracer {
  StageTrace* trace;
  void add(const char* name, std::int64_t survivors) const {
    if (trace != nullptr) trace->stages.push_back({name, survivors});
  }
};

void trace_finite(void* ctx, const char* name) {
  auto* t = static_cast<std::pair<StageTrace*, Workspace::Impl*>*>(ctx);
  t->first->stages.push_back({name, count_ge(t->second->w, -std::numeric_limits<float>::max())});
}

// Whether the candidates of a ladder level provably contain every survivor
// of top-k or min-p.
bool covers_top_k_or_min_p(const cpu::ExpResult& r, const Active& a, const SamplerConfig& c,
                           int level) {
  const auto j = static_cast<std::size_t>(level);
  // mlx_lm compares rounded log-probs; the 0.1% room covers that rounding.
  const float min_p_room = c.filter_order != FilterOrder::kMlxLm ? c.min_p : c.min_p * 0.999f;
  return (a.top_k && r.count[j] >= c.top_k) ||
         (a.min_p && stages::ladder_thresholds()[j] <= min_p_room);
}

// Smallest ladder level from `from` that covers top-k or min-p, or that may
// cover top-p (checked after the gather from the candidates' exact mass, see
// contains_top_p); -1 means every token is a candidate.
int choose_level(const cpu::ExpResult& r, const Active& a, const SamplerConfig& c, int from) {
  if (c.filter_order == FilterOrder::kTopKFirst && a.top_k) {
    // Top-k runs first, on every token: the candidates must hold the whole
    // top-k set (top-p's limit is its mass).
    for (int j = from; j < cpu::kLadderLevels; ++j)
      if (r.count[static_cast<std::size_t>(j)] >= c.top_k) return j;
    return -1;
  }
  for (int j = from; j < cpu::kLadderLevels; ++j) {
    if (covers_top_k_or_min_p(r, a, c, j)) return j;
    if (a.top_p && r.count[static_cast<std::size_t>(j)] > 0) return j;  // verified after gather
  }
  return -1;
}

// Every token outside the candidates has at least their whole mass above it,
// so once that mass reaches the limit none of them survives top-p.
bool contains_top_p(const std::vector<Candidate>& c, double limit) {
  // Four partial sums: one chain of dependent adds cost ~1.5 ns a candidate
  // (a flat row gathers all of them).
  std::array<double, 4> mass{};
  std::size_t i = 0;
  for (; i + 4 <= c.size(); i += 4)
    for (std::size_t l = 0; l < 4; ++l) mass[l] += static_cast<double>(c[i + l].weight);
  for (; i < c.size(); ++i) mass[0] += static_cast<double>(c[i].weight);
  return (mass[0] + mass[1]) + (mass[2] + mass[3]) >= limit;
}

void gather(std::span<const float> x, float threshold, Workspace::Impl& ws) {
  const std::size_t n =
      cpu::active_kernels().indices_ge(x.data(), x.size(), threshold, ws.indices.data());
  ws.cand.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.cand[i].id = ws.indices[i];
}

}  // namespace

Selection run_pipeline(const StepInput& in, const SamplerConfig& cfg, const PenaltyConfig& pen,
                       Workspace::Impl& ws, StageTrace* trace) {
  cfg.validate();
  pen.validate();
  const Tracer tr{trace};
  stages::load_masked(in, ws);
  const std::int64_t vocab = in.logits.vocab;
  const std::span<float> w(ws.w.data(), static_cast<std::size_t>(vocab));
  if (trace != nullptr) tr.add("mask", count_ge(w, -std::numeric_limits<float>::max()));
  std::pair<StageTrace*, Workspace::Impl*> ctx{trace, &ws};
  stages::apply_penalties(w, pen, in.history, cfg.filter_order, ws,
                          trace != nullptr ? trace_finite : nullptr, &ctx);
  const float m = stages::checked_max(w);

  Selection sel;
  if (!cfg.sampling_active()) {  // greedy over the processed logits
    const auto r = cpu::active_kernels().argmax_f32(w.data(), w.size(), nullptr);
    sel.greedy = static_cast<std::int32_t>(r.index);
    tr.add("argmax", 1);
    return sel;
  }

  const Active act = stages::active_filters(cfg, vocab);
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(cfg.temperature));
  // spec: weights with temperature applied (kSpec and kTopKFirst).
  const bool spec = cfg.filter_order != FilterOrder::kMlxLm;
  const bool k_first = cfg.filter_order == FilterOrder::kTopKFirst && act.top_k;
  const auto& k = cpu::active_kernels();
  const std::span<float> e(ws.e.data(), w.size());

  if (!act.any()) {  // no filter: every token with nonzero weight survives
    cpu::ExpParams p{inv_t, m * inv_t, nullptr};
    if (!spec) {
      // mlx-lm scales float32 log-probabilities, w - lse, by 1/T: same order here.
      const auto z1 = k.exp_weights(w.data(), w.size(), {1.0f, m, nullptr}, nullptr, nullptr);
      const auto lse = static_cast<float>(static_cast<double>(m) + std::log(z1.total));
      for (float& x : w) x -= lse;
      p = {inv_t, (m - lse) * inv_t, nullptr};
    }
    const auto r = k.exp_weights(w.data(), w.size(), p, e.data(), ws.block_sums.data());
    sel.dense = true;
    sel.total = r.total;
    if (trace != nullptr) {
      const std::int64_t nz = count_ge(e, std::numeric_limits<float>::denorm_min());
      tr.add(spec ? "temperature_softmax" : "log_softmax", nz);
      for (const char* s : {"top_p", "min_p", "top_k"}) tr.add(s, nz);
      tr.add(spec ? "renormalise" : "temperature", nz);
    }
    return sel;
  }

  // Filter weights: temperature applied (spec) or temperature 1 (mlx_lm).
  const float scale = spec ? inv_t : 1.0f;
  const cpu::ExpParams p{scale, m * scale, stages::ladder_thresholds().data()};
  const auto r = k.exp_weights(w.data(), w.size(), p, e.data(), nullptr);
  const double z = r.total;
  const double top_p_limit = static_cast<double>(cfg.top_p) * z;
  // mlx_lm keys are float32 log-probabilities, as mlx computes them.
  const auto lse = static_cast<float>(static_cast<double>(m) + std::log(z));

  for (int level = choose_level(r, act, cfg, 0);;) {
    if (level >= 0) {
      gather(e, stages::ladder_thresholds()[static_cast<std::size_t>(level)], ws);
    } else if (spec) {
      gather(e, std::numeric_limits<float>::denorm_min(), ws);
    } else {
      gather(w, -std::numeric_limits<float>::max(), ws);
    }
    for (Candidate& c : ws.cand) {
      const auto i = static_cast<std::size_t>(c.id);
      c.weight = e[i];
      c.key = spec ? e[i] : w[i] - lse;
    }
    if (level >= 0 && !k_first && !covers_top_k_or_min_p(r, act, cfg, level) &&
        !contains_top_p(ws.cand, top_p_limit)) {
      level = choose_level(r, act, cfg, level + 1);
      continue;
    }
    if (trace != nullptr) {
      tr.add(spec ? "temperature_softmax" : "log_softmax",
             spec ? count_ge(e, std::numeric_limits<float>::denorm_min())
                  : count_ge(w, -std::numeric_limits<float>::max()));
    }
    auto count_or_all = [&](bool on) -> std::int64_t {
      if (on || trace == nullptr) return static_cast<std::int64_t>(ws.cand.size());
      return trace->stages.back().survivors;
    };
    if (k_first) {
      // Top-k, then top-p against the mass of the top-k set, then min-p.
      stages::filter_top_k(ws.cand, cfg.top_k, ws);
      tr.add("top_k", count_or_all(true));
      if (act.top_p) {
        double mass_k = 0.0;
        for (const Candidate& c : ws.cand) mass_k += static_cast<double>(c.weight);
        stages::filter_top_p(ws.cand, static_cast<double>(cfg.top_p) * mass_k,
                             TiePolicy::kIndexOrder, ws);
      }
      tr.add("top_p", count_or_all(act.top_p));
      if (act.min_p) stages::filter_below(ws.cand, cfg.min_p);
      tr.add("min_p", count_or_all(act.min_p));
      break;
    }
    if (act.top_p) {
      stages::filter_top_p(ws.cand, top_p_limit,
                           spec ? TiePolicy::kIndexOrder : TiePolicy::kKeepAllTies, ws);
    }
    tr.add("top_p", count_or_all(act.top_p));
    if (act.min_p) {
      if (spec) {
        stages::filter_below(ws.cand, cfg.min_p);  // e_max == 1 exactly
      } else {
        const float top = m - lse;
        const auto log_min_p = static_cast<float>(std::log(static_cast<double>(cfg.min_p)));
        stages::filter_below(ws.cand, top + log_min_p);
      }
    }
    tr.add("min_p", count_or_all(act.min_p));
    if (act.top_k) stages::filter_top_k(ws.cand, cfg.top_k, ws);
    tr.add("top_k", count_or_all(act.top_k));

    // mlx_lm keys are rounded log-probs; two distinct logits can share one.
    // If the smallest survivor sits near the ladder cut, a token outside the
    // candidate set could tie it: redo with the next level.
    if (!spec && level >= 0) {
      float min_key = std::numeric_limits<float>::infinity();
      for (const Candidate& c : ws.cand) min_key = std::min(min_key, c.key);
      const double cut = std::log(static_cast<double>(
                             stages::ladder_thresholds()[static_cast<std::size_t>(level)])) +
                         static_cast<double>(m) - static_cast<double>(lse);
      if (static_cast<double>(min_key) <= cut + 1e-3 + 1e-6 * std::fabs(static_cast<double>(lse))) {
        level = level + 1 < cpu::kLadderLevels ? level + 1 : -1;
        if (trace != nullptr) trace->stages.resize(trace->stages.size() - 4);
        continue;
      }
    }
    break;
  }

  if (!spec) {  // the draw uses temperature-scaled log-probabilities, as mlx-lm does
    const float shift = (m - lse) * inv_t;
    for (Candidate& c : ws.cand) c.weight = cpu::expc::exp_f32(c.key * inv_t - shift);
  }
  double total = 0.0;
  for (const Candidate& c : ws.cand) total += static_cast<double>(c.weight);
  sel.total = total;
  if (trace != nullptr) {
    const auto nz = std::count_if(ws.cand.begin(), ws.cand.end(),
                                  [](const Candidate& c) { return c.weight > 0.0f; });
    tr.add(spec ? "renormalise" : "temperature", static_cast<std::int64_t>(nz));
  }
  return sel;
}

}  // namespace nextok::detail

namespace nextok::stages {

std::span<const float> ladder_thresholds() noexcept {
  static const std::array<float, cpu::kLadderLevels> tau = {
      cpu::expc::exp_f32(-4.0f), cpu::expc::exp_f32(-8.0f), cpu::expc::exp_f32(-16.0f),
      cpu::expc::exp_f32(-32.0f)};
  return tau;
}

}  // namespace nextok::stages
