// The canonical summation order shared by all ISAs: within a kSumBlock block,
// element j adds into lane j % 8 (double lanes for the total, so it is exact
// to ~1e-16 relative; float lanes for the ladder estimates); a block's sum is
// its lanes added in double, lane 0 first; the total is the blocks in order.
#pragma once

#include <array>
#include <cstddef>

#include "backend/cpu/kernels.hpp"

namespace nextok::cpu {

struct LaneAcc {
  std::array<double, 8> sum{};
  std::array<std::array<float, 8>, kLadderLevels> mass{};
  std::array<std::int64_t, kLadderLevels> count{};

  void reset() noexcept { *this = LaneAcc{}; }
};

template <typename T>
inline double reduce_lanes(const std::array<T, 8>& lanes) noexcept {
  double d = 0.0;
  for (T v : lanes) d += static_cast<double>(v);
  return d;
}

// Folds one finished block into the running result.
inline void flush_block(LaneAcc& acc, ExpResult& out, double* block_sums, std::size_t block) {
  const double s = reduce_lanes(acc.sum);
  out.total += s;
  if (block_sums != nullptr) block_sums[block] = s;
  for (int j = 0; j < kLadderLevels; ++j) {
    out.mass[j] += reduce_lanes(acc.mass[j]);
    out.count[j] += acc.count[j];
  }
  acc.reset();
}

}  // namespace nextok::cpu
