// Tokens more than kGap below the max (in temperature-scaled logits) weigh at
// most b = e^-kGap each. The pass computes e for the tokens above that cut,
// counts the ladder levels whose threshold exceeds b exactly, and bounds Z by
// [S, S + (V - k)·b]. Every decision that the full pass takes from Z (whether
// a level's candidates hold the top-p mass, where top-p cuts) is taken at
// both ends of the interval; if they differ the full pass runs instead.
#include "sampling/bounded_tail.hpp"

#include <cmath>
#include <limits>

#include "sampling/candidate_filters.hpp"

namespace nextok::detail {
namespace {

constexpr float kGap = 20.0f;              // e^-20 ≈ 2.1e-9
constexpr std::size_t kMinVocab = 8192;    // below this the full pass is as cheap
constexpr std::size_t kSampleStride = 61;  // prime: no alignment with block layouts

}  // namespace

BoundedTailCounters& bounded_tail_counters() noexcept {
  static thread_local BoundedTailCounters c;
  return c;
}

bool try_bounded_tail(std::span<const float> w, float m, float inv_t, const SamplerConfig& cfg,
                      const stages::ActiveFilters& act, Workspace::Impl& ws, Selection& sel) {
  const std::size_t n = w.size();
  if (n < kMinVocab) return false;
  auto& counters = bounded_tail_counters();
  const double x_cut_d =
      static_cast<double>(m) - static_cast<double>(kGap) * static_cast<double>(cfg.temperature);
  const auto x_cut = static_cast<float>(x_cut_d);
  if (!std::isfinite(x_cut)) return false;
  // A strided sample first: a flat row keeps most tokens near the max, where
  // this pass would only add work.
  std::size_t near = 0, sampled = 0;
  for (std::size_t i = 0; i < n; i += kSampleStride, ++sampled) near += w[i] >= x_cut ? 1 : 0;
  if (near * 3 > sampled) {
    ++counters.declined;
    return false;
  }
  const auto& kern = cpu::active_kernels();
  const std::size_t k = kern.indices_ge(w.data(), n, x_cut, ws.indices.data());
  if (k * 3 > n) {
    ++counters.declined;
    return false;
  }
  ws.head_w.resize(k);
  ws.head_e.resize(k);
  for (std::size_t i = 0; i < k; ++i) ws.head_w[i] = w[static_cast<std::size_t>(ws.indices[i])];
  const float shift = m * inv_t;
  const auto ladder = stages::ladder_thresholds();
  const cpu::ExpResult head = kern.exp_weights(ws.head_w.data(), k, {inv_t, shift, ladder.data()},
                                               ws.head_e.data(), nullptr);

  // Any token below the cut has x * inv_t - shift <= t_cut (both roundings
  // are monotone), so its exp is at most e^t_cut up to the exp's ~2 ulp.
  const float t_cut = x_cut * inv_t - shift;
  const double b = std::exp(static_cast<double>(t_cut)) * (1.0 + 1e-5) +
                   static_cast<double>(std::numeric_limits<float>::denorm_min());
  int exact_levels = 0;
  while (exact_levels<cpu::kLadderLevels&& static_cast<double>(
             ladder[static_cast<std::size_t>(exact_levels)])>
             b)
    ++exact_levels;
  // Z is a double sum of n non-negative terms in a fixed order: within
  // n·2^-53 of the true sum; the same holds for S. 1e-9 covers both.
  const double s = head.total;
  const double rest = static_cast<double>(n - k) * b;
  const double p = static_cast<double>(cfg.top_p);
  const TopPLimit limit{p * (s * (1.0 - 1e-9)), p * ((s + rest) * (1.0 + 1e-9))};

  auto gather_level = [&](int level) {
    if (level < 0) return false;
    const float tau = ladder[static_cast<std::size_t>(level)];
    ws.head_pos.resize(k);
    const std::size_t c = kern.indices_ge(ws.head_e.data(), k, tau, ws.head_pos.data());
    ws.cand.resize(c);
    for (std::size_t j = 0; j < c; ++j) {
      const auto at = static_cast<std::size_t>(ws.head_pos[j]);
      ws.cand[j] = {ws.head_e[at], ws.head_e[at], ws.indices[at]};
    }
    return true;
  };
  const FilterInputs fin{cfg, act, head, exact_levels, limit, m, 0.0f, inv_t, {}, {}};
  if (filter_candidates(fin, GatherLevel(gather_level), ws, nullptr) != FilterOutcome::kDone) {
    ++counters.undecided;
    return false;
  }
  double total = 0.0;
  for (const Candidate& c : ws.cand) total += static_cast<double>(c.weight);
  sel.total = total;
  ++counters.decided;
  return true;
}

}  // namespace nextok::detail
