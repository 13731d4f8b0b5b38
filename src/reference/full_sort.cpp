#include "reference/full_sort.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/exp_f32.hpp"
#include "sampling/stages.hpp"

namespace nextok::reference {
namespace {

struct Survivors {
  std::int32_t greedy = -1;
  std::vector<Candidate> list;  // sorted by id, final weights
  double total = 0.0;
};

Survivors run(const StepInput& in, const SamplerConfig& cfg, const PenaltyConfig& pen,
              Workspace::Impl& ws) {
  cfg.validate();
  pen.validate();
  stages::load_masked(in, ws);
  const auto n = static_cast<std::size_t>(in.logits.vocab);
  std::span<float> w(ws.w.data(), n);
  stages::apply_penalties(w, pen, in.history, cfg.filter_order, ws);
  const float m = stages::checked_max(w);
  Survivors s;
  if (!cfg.sampling_active()) {
    s.greedy = static_cast<std::int32_t>(std::max_element(w.begin(), w.end()) - w.begin());
    return s;
  }
  // spec: weights with temperature applied (kSpec and kTopKFirst).
  const bool spec = cfg.filter_order != FilterOrder::kMlxLm;
  const float inv_t = static_cast<float>(1.0 / static_cast<double>(cfg.temperature));
  const stages::ActiveFilters act = stages::active_filters(cfg, static_cast<std::int64_t>(n));
  const bool filtered = act.any();
  const auto& kern = cpu::active_kernels();
  // mlx_lm: filters on temperature-1 log-probabilities, w - lse.
  const auto z1 = kern.exp_weights(w.data(), n, {1.0f, m, nullptr}, ws.e.data(), nullptr);
  const auto lse = static_cast<float>(static_cast<double>(m) + std::log(z1.total));
  cpu::ExpResult r = z1;
  if (spec) {
    r = kern.exp_weights(w.data(), n, {inv_t, m * inv_t, nullptr}, ws.e.data(), nullptr);
  } else if (!filtered) {
    for (float& x : w) x -= lse;  // the draw's weights, computed as mlx-lm orders it
    r = kern.exp_weights(w.data(), n, {inv_t, (m - lse) * inv_t, nullptr}, ws.e.data(), nullptr);
  }
  const double z = r.total;

  std::vector<Candidate> all(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float key = spec ? ws.e[i] : (filtered ? w[i] - lse : w[i]);
    all[i] = {key, ws.e[i], static_cast<std::int32_t>(i)};
  }
  std::vector<char> keep(n, 1);
  if (!spec) {  // mlx_lm: tokens at -inf logprob never survive
    for (std::size_t i = 0; i < n; ++i) keep[i] = w[i] != -INFINITY;
  }

  // Ascending (key, id): the order of the spec's top-p rule.
  std::vector<std::size_t> asc(n);
  std::iota(asc.begin(), asc.end(), 0);
  std::sort(asc.begin(), asc.end(), [&](std::size_t a, std::size_t b) {
    return all[a].key < all[b].key || (all[a].key == all[b].key && a < b);
  });

  auto top_p = [&](double mass) {
    if (spec) {  // keep iff inclusive ascending cumsum (over the kept) > 1 - top_p
      double cum = 0.0;
      const double cut = mass * (1.0 - static_cast<double>(cfg.top_p));
      for (std::size_t i : asc) {
        if (!keep[i]) continue;
        cum += static_cast<double>(all[i].weight);
        if (!(cum > cut)) keep[i] = 0;
      }
    } else {  // mlx-lm: mass strictly above >= top_p * total drops; ties by value
      std::vector<double> above(n);
      double acc = 0.0;
      for (std::size_t j = n; j-- > 0;) {
        above[j] = acc;
        acc += static_cast<double>(all[asc[j]].weight);
      }
      std::size_t first_kept = 0;
      while (first_kept < n && above[first_kept] >= static_cast<double>(cfg.top_p) * z)
        ++first_kept;
      const float threshold = all[asc[std::min(first_kept, n - 1)]].key;
      for (std::size_t i = 0; i < n; ++i)
        if (all[i].key < threshold) keep[i] = 0;
    }
  };
  auto min_p = [&] {
    float kmax = -INFINITY;
    for (std::size_t i = 0; i < n; ++i)
      if (keep[i]) kmax = std::max(kmax, all[i].key);
    const float cut = spec ? kmax * cfg.min_p
                           : kmax + static_cast<float>(std::log(static_cast<double>(cfg.min_p)));
    for (std::size_t i = 0; i < n; ++i)
      if (all[i].key < cut) keep[i] = 0;
  };
  auto top_k = [&] {
    std::int64_t rank = 0;
    for (auto it = asc.rbegin(); it != asc.rend();) {  // descending key, ascending id
      auto group_end = it;
      while (group_end != asc.rend() && all[*group_end].key == all[*it].key) ++group_end;
      std::vector<std::size_t> group(it, group_end);
      std::sort(group.begin(), group.end());
      for (std::size_t i : group) {
        if (!keep[i]) continue;
        if (rank >= cfg.top_k) keep[i] = 0;
        ++rank;
      }
      it = group_end;
    }
  };
  if (cfg.filter_order == FilterOrder::kTopKFirst && act.top_k) {
    top_k();
    if (act.top_p) {
      double mass_k = 0.0;  // id order, as the pipeline sums its candidates
      for (std::size_t i = 0; i < n; ++i)
        if (keep[i]) mass_k += static_cast<double>(all[i].weight);
      top_p(mass_k);
    }
    if (act.min_p) min_p();
  } else {
    if (act.top_p) top_p(z);
    if (act.min_p) min_p();
    if (act.top_k) top_k();
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    Candidate c = all[i];
    if (!spec && filtered) c.weight = cpu::expc::exp_f32(c.key * inv_t - (m - lse) * inv_t);
    if (c.weight > 0.0f) {
      s.list.push_back(c);
      s.total += static_cast<double>(c.weight);
    }
  }
  // Unfiltered, the renormalisation total is the softmax's own canonical sum
  // (kSumBlock lane order) rather than a sequential one.
  if (!filtered) s.total = r.total;
  return s;
}

}  // namespace

Distribution full_sort_distribution(const StepInput& in, const SamplerConfig& cfg,
                                    const PenaltyConfig& pen, Workspace& ws) {
  const Survivors s = run(in, cfg, pen, ws.impl());
  Distribution d;
  if (s.greedy >= 0) {
    d.ids = {s.greedy};
    d.probs = {1.0f};
    return d;
  }
  for (const Candidate& c : s.list) {
    d.ids.push_back(c.id);
    d.probs.push_back(static_cast<float>(static_cast<double>(c.weight) / s.total));
  }
  return d;
}

std::int32_t full_sort_sample(const StepInput& in, const SamplerConfig& cfg,
                              const PenaltyConfig& pen, Pcg32& rng, Workspace& ws) {
  const Survivors s = run(in, cfg, pen, ws.impl());
  if (s.greedy >= 0) return s.greedy;
  return stages::draw_sparse(s.list, s.total, rng.next_f32());
}

}  // namespace nextok::reference
