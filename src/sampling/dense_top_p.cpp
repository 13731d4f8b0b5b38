#include "sampling/dense_top_p.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "backend/cpu/kernels.hpp"

namespace nextok::detail {
namespace {

// About a thousand samples: the bracket is ±(8 + 4σ) of them, σ ≤ 16, so
// under a sixth of the row at top_p 0.5 and a twentieth at 0.95.
constexpr std::size_t kSamples = 1000;

// Every kept weight is a multiple of the ulp of the smallest one and at most
// 1 (spec: e_max == 1; 2 for margin), so while V·2/ulp < 2^53 every partial
// sum of kept weights is exact in double (flat rows: ulp 2^-24, 2^42).
bool sums_are_exact(const DenseCut& cut, std::size_t n) {
  const float smallest = std::max(cut.above, cut.floor);
  if (!(smallest >= std::numeric_limits<float>::min())) return false;  // normal floats only
  int exp = 0;
  std::frexp(smallest, &exp);  // smallest = f·2^exp, f in [0.5, 1): ulp = 2^(exp-24)
  return static_cast<double>(n) * 2.0 * std::ldexp(1.0, 24 - exp) < std::ldexp(1.0, 53);
}

}  // namespace

DenseTopPCounters& dense_top_p_counters() noexcept {
  static thread_local DenseTopPCounters c;
  return c;
}

bool try_dense_top_p(std::span<const float> e, double z, const SamplerConfig& cfg,
                     const stages::ActiveFilters& act, Workspace::Impl& ws, Selection& sel) {
  const std::size_t n = e.size();
  auto& counters = dense_top_p_counters();
  const double limit = static_cast<double>(cfg.top_p) * z;

  // Bracket the boundary: in the sample sorted descending, where its own
  // mass reaches top_p, plus and minus 4 binomial deviations and 8.
  std::vector<float>& sample = ws.head_w;
  sample.clear();
  const std::size_t stride =
      std::max<std::size_t>(1, n / kSamples) | 1U;  // odd: no block alignment
  for (std::size_t i = 0; i < n; i += stride)
    if (e[i] > 0.0f) sample.push_back(e[i]);
  if (sample.size() < 64) return false;
  std::sort(sample.begin(), sample.end(), std::greater<>());
  double sample_mass = 0.0;
  for (float x : sample) sample_mass += static_cast<double>(x);
  const double want = static_cast<double>(cfg.top_p) * sample_mass;
  std::size_t at = 0;
  for (double cum = 0.0; at + 1 < sample.size(); ++at) {
    cum += static_cast<double>(sample[at]);
    if (cum >= want) break;
  }
  const double m = static_cast<double>(sample.size());
  const double q = static_cast<double>(at) / m;
  const auto margin = static_cast<std::size_t>(8.0 + 4.0 * std::sqrt(m * q * (1.0 - q)));
  const float hi = at >= margin ? sample[at - margin] : std::numeric_limits<float>::infinity();
  const float lo =
      at + margin < sample.size() ? sample[at + margin] : std::numeric_limits<float>::denorm_min();

  double above = 0.0;
  const std::size_t k =
      cpu::active_kernels().band_split(e.data(), n, lo, hi, &above, nullptr, ws.indices.data());
  if (k * 4 > n || !(above < limit)) {
    ++counters.missed;
    return false;
  }
  ws.cand.resize(k);
  double band_mass = 0.0;
  for (std::size_t i = 0; i < k; ++i) {
    const float x = e[static_cast<std::size_t>(ws.indices[i])];
    ws.cand[i] = {x, x, ws.indices[i]};
    band_mass += static_cast<double>(x);
  }
  // The boundary lies in the band only if the band's mass reaches the limit;
  // keeping the whole band means it may lie below.
  if (above + band_mass < limit) {
    ++counters.missed;
    return false;
  }
  stages::filter_top_p(ws.cand, limit - above, stages::TiePolicy::kIndexOrder, ws);
  if (ws.cand.size() == k) {
    ++counters.missed;
    return false;
  }
  DenseCut cut;
  cut.above = std::numeric_limits<float>::infinity();
  for (const Candidate& c : ws.cand) cut.above = std::min(cut.above, c.key);
  cut.tie_from = std::numeric_limits<std::int32_t>::max();
  for (const Candidate& c : ws.cand)
    if (c.key == cut.above) cut.tie_from = std::min(cut.tie_from, c.id);
  cut.floor = act.min_p ? cfg.min_p : 0.0f;  // spec: e_max == 1

  // S in id order, as the list path sums its survivors, and the running sum
  // before each block (the draw skips to its block).
  const std::span<double> prefix(ws.block_sums.data(), (n + cpu::kSumBlock - 1) / cpu::kSumBlock);
  double cum = 0.0;
  std::int32_t last = -1;
  if (sums_are_exact(cut, n)) {
    // No partial sum rounds, so any order gives the id-order bits: the
    // vector pass sums each block, the kept ties are added to theirs.
    const bool floor_cuts = cut.floor > cut.above;
    const float kept_above = floor_cuts ? std::nextafter(cut.floor, 0.0f) : cut.above;
    double mass = 0.0;
    cpu::active_kernels().band_split(e.data(), n, std::numeric_limits<float>::infinity(),
                                     kept_above, &mass, prefix.data(), ws.indices.data());
    if (!floor_cuts) {
      for (const Candidate& c : ws.cand)
        if (c.key == cut.above)
          prefix[static_cast<std::size_t>(c.id) / cpu::kSumBlock] += static_cast<double>(c.key);
    }
    for (double& b : prefix) {  // block sums to the sums before each block
      const double block = b;
      b = cum;
      cum += block;
    }
    for (std::size_t i = n; i-- > 0;) {
      if (cut.keeps(e[i], static_cast<std::int32_t>(i))) {
        last = static_cast<std::int32_t>(i);
        break;
      }
    }
  } else {
    for (std::size_t base = 0, b = 0; base < n; base += cpu::kSumBlock, ++b) {
      prefix[b] = cum;
      const std::size_t end = std::min(n, base + cpu::kSumBlock);
      for (std::size_t i = base; i < end; ++i) {
        const auto id = static_cast<std::int32_t>(i);
        if (cut.keeps(e[i], id)) {
          cum += static_cast<double>(e[i]);
          last = id;
        }
      }
    }
  }
  sel.cut = true;
  sel.dense_cut = cut;
  sel.total = cum;
  sel.last = last;
  ++counters.taken;
  return true;
}

std::int32_t draw_cut(std::span<const float> e, std::span<const double> block_prefix,
                      const Selection& sel, float u) {
  const double target = static_cast<double>(u) * sel.total;
  const std::size_t blocks = block_prefix.size();
  std::size_t b = 0;
  while (b + 1 < blocks && !(block_prefix[b + 1] > target)) ++b;
  double cum = block_prefix[b];
  const std::size_t end = std::min(e.size(), (b + 1) * cpu::kSumBlock);
  for (std::size_t i = b * cpu::kSumBlock; i < end; ++i) {
    const auto id = static_cast<std::int32_t>(i);
    if (!sel.dense_cut.keeps(e[i], id)) continue;
    cum += static_cast<double>(e[i]);
    if (cum > target) return id;
  }
  return sel.last;
}

}  // namespace nextok::detail
