// Orchestrates stages 1-11 for both filter orders. The filters work on a
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

struct Active {
  bool top_p, min_p, top_k;
  bool any() const { return top_p || min_p || top_k; }
};

Active active_filters(const SamplerConfig& c, std::int64_t vocab) {
  return {c.top_p > 0.0f && c.top_p < 1.0f, c.min_p > 0.0f, c.top_k > 0 && c.top_k < vocab};
}

std::int64_t count_ge(std::span<const float> x, float threshold) {
  return static_cast<std::int64_t>(std::count_if(
      x.begin(), x.end(), [threshold](float v) { return v >= threshold; }));
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

// Smallest ladder level whose candidate set provably contains every survivor
// of at least one active filter, or -1 (take every token).
int choose_level(const cpu::ExpResult& r, const Active& a, const SamplerConfig& c,
                 double top_p_limit, FilterOrder order) {
  const auto tau = stages::ladder_thresholds();
  const float min_p_room = order == FilterOrder::kSpec ? c.min_p : c.min_p * 0.999f;
  for (int j = 0; j < cpu::kLadderLevels; ++j) {
    if (a.top_k && r.count[j] >= c.top_k) return j;
    // Float lane sums are good to ~1e-5 relative; the margin covers them.
    if (a.top_p && r.mass[j] >= top_p_limit * (1.0 + 1e-4)) return j;
    if (a.min_p && tau[j] <= min_p_room) return j;
  }
  return -1;
}

void gather(std::span<const float> x, float threshold, Workspace::Impl& ws) {
  const std::size_t n =
      cpu::active_kernels().indices_ge(x.data(), x.size(), threshold, ws.indices.data());
  ws.cand.resize(n);
  for (std::size_t i = 0; i < n; ++i) ws.cand[i].id = ws.indices[i];
}

void sort_by_id(std::vector<Candidate>& c) {
  std::sort(c.begin(), c.end(),
            [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
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

  const Active act = active_filters(cfg, vocab);
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(cfg.temperature));
  const bool spec = cfg.filter_order == FilterOrder::kSpec;
  const auto& k = cpu::active_kernels();
  const std::span<float> e(ws.e.data(), w.size());

  if (!act.any()) {  // no filter: every token with nonzero weight survives
    const cpu::ExpParams p{inv_t, m * inv_t, nullptr};
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

  for (int level = choose_level(r, act, cfg, top_p_limit, cfg.filter_order);;) {
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
    if (trace != nullptr) {
      tr.add(spec ? "temperature_softmax" : "log_softmax",
             spec ? count_ge(e, std::numeric_limits<float>::denorm_min())
                  : count_ge(w, -std::numeric_limits<float>::max()));
    }
    auto count_or_all = [&](bool on) -> std::int64_t {
      if (on || trace == nullptr) return static_cast<std::int64_t>(ws.cand.size());
      return trace->stages.back().survivors;
    };
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

  if (!spec) {  // the draw uses temperature-scaled weights
    const float shift = m * inv_t;
    for (Candidate& c : ws.cand) {
      c.weight = cpu::expc::exp_f32(w[static_cast<std::size_t>(c.id)] * inv_t - shift);
    }
  }
  sort_by_id(ws.cand);
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
