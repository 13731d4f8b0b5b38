// Orchestrates stages 1-11 for every filter order. The filters work on a
// small candidate set chosen from a threshold ladder computed in the same
// pass as the softmax; the result is exact (see docs/semantics.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "backend/cpu/exp_f32.hpp"
#include "nextok/error.hpp"
#include "sampling/bounded_tail.hpp"
#include "sampling/candidate_filters.hpp"
#include "sampling/dense_top_p.hpp"
#include "sampling/pipeline.hpp"
#include "sampling/stages.hpp"

namespace nextok::detail {
namespace {

struct Tracer {
  StageTrace* trace;
  void add(const char* name, std::int64_t survivors) const {
    if (trace != nullptr) trace->stages.push_back({name, survivors});
  }
};

void trace_finite(void* ctx, const char* name) {
  auto* t = static_cast<std::pair<StageTrace*, Workspace::Impl*>*>(ctx);
  t->first->stages.push_back({name, stages::count_ge(t->second->w, -std::numeric_limits<float>::max())});
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
  if (trace != nullptr) tr.add("mask", stages::count_ge(w, -std::numeric_limits<float>::max()));
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

  const stages::ActiveFilters act = stages::active_filters(cfg, vocab);
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(cfg.temperature));
  // spec: weights with temperature applied (kSpec and kTopKFirst).
  const bool spec = cfg.filter_order != FilterOrder::kMlxLm;
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
      const std::int64_t nz = stages::count_ge(e, std::numeric_limits<float>::denorm_min());
      tr.add(spec ? "temperature_softmax" : "log_softmax", nz);
      for (const char* s : {"top_p", "min_p", "top_k"}) tr.add(s, nz);
      tr.add(spec ? "renormalise" : "temperature", nz);
    }
    return sel;
  }

  // Most of a peaked row's tokens are too light to matter but for Z's last
  // digits: try without their exps first (bounded_tail.cpp).
  if (spec && trace == nullptr && try_bounded_tail(w, m, inv_t, cfg, act, ws, sel)) return sel;

  // Filter weights: temperature applied (spec) or temperature 1 (mlx_lm).
  const float scale = spec ? inv_t : 1.0f;
  const cpu::ExpParams p{scale, m * scale, stages::ladder_thresholds().data()};
  const auto r = k.exp_weights(w.data(), w.size(), p, e.data(), nullptr);
  const double z = r.total;
  const double top_p_limit = static_cast<double>(cfg.top_p) * z;
  // mlx_lm keys are float32 log-probabilities, as mlx computes them.
  const auto lse = static_cast<float>(static_cast<double>(m) + std::log(z));

  // A nucleus of most of the row (even the top ladder level holds over an
  // eighth of it): cut ws.e in place rather than list it (dense_top_p.cpp).
  if (spec && trace == nullptr && act.top_p && !act.top_k &&
      static_cast<std::size_t>(r.count[0]) * 8 > w.size() &&
      try_dense_top_p(e, z, cfg, act, ws, sel)) {
    return sel;
  }

  const FilterInputs fin{cfg,   act, r, cpu::kLadderLevels, {top_p_limit, top_p_limit}, m, lse,
                         inv_t, e,   w};
  auto gather_level = [&](int level) {
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
    return true;
  };
  filter_candidates(fin, GatherLevel(gather_level), ws, trace);  // exact Z: always decided

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
