// The canonical summation order shared by all ISAs: within a kSumBlock block,
// element j adds into double lane j % 8, so the total is exact to ~1e-16
// relative; a block's sum is its lanes added, lane 0 first; the total is the
// blocks added in order.
#pragma once

#include <array>
#include <cstddef>

#include "backend/cpu/kernels.hpp"

namespace nextok::cpu {

struct LaneAcc {
  std::array<double, 8> sum{};
  std::array<std::int64_t, kLadderLevels> count{};

  void reset() noexcept { *this = LaneAcc{}; }
};

inline double reduce_lanes(const std::array<double, 8>& lanes) noexcept {
  double d = 0.0;
  for (double v : lanes) d += v;
  return d;
}

// Folds one finished block into the running result.
inline void flush_block(LaneAcc& acc, ExpResult& out, double* block_sums, std::size_t block) {
  const double s = reduce_lanes(acc.sum);
  out.total += s;
  if (block_sums != nullptr) block_sums[block] = s;
  for (int j = 0; j < kLadderLevels; ++j) out.count[j] += acc.count[j];
  acc.reset();
}

}  // namespace nextok::cpu
