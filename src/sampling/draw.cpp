// Stage 11: inverse-CDF draw. target = u * total; the token is the first
// (in id order) whose running sum exceeds target; on float drift, the last
// token with nonzero weight.
#include "sampling/stages.hpp"

namespace nextok::stages {

std::int32_t draw_sparse(std::span<const Candidate> survivors, double total, float u) {
  const double target = static_cast<double>(u) * total;
  double cum = 0.0;
  std::int32_t last = -1;
  for (const Candidate& c : survivors) {
    if (!(c.weight > 0.0f)) continue;
    cum += static_cast<double>(c.weight);
    last = c.id;
    if (cum > target) return c.id;
  }
  return last;
}

std::int32_t draw_dense(std::span<const float> e, std::span<const double> block_sums,
                        double total, float u) {
  const double target = static_cast<double>(u) * total;
  double cum = 0.0;
  std::size_t start = e.size();
  // Skip whole blocks by their sums, then walk element by element.
  for (std::size_t b = 0; b < block_sums.size(); ++b) {
    if (cum + block_sums[b] > target) {
      start = b * cpu::kSumBlock;
      break;
    }
    cum += block_sums[b];
  }
  for (std::size_t i = start; i < e.size(); ++i) {
    if (!(e[i] > 0.0f)) continue;
    cum += static_cast<double>(e[i]);
    if (cum > target) return static_cast<std::int32_t>(i);
  }
  for (std::size_t i = e.size(); i-- > 0;) {
    if (e[i] > 0.0f) return static_cast<std::int32_t>(i);
  }
  return -1;
}

}  // namespace nextok::stages
