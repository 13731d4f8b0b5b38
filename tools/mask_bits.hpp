// Bit helpers over token masks for the random-walk commands (json-generate,
// grammar-generate, harmony-generate).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nextok::tools {

inline std::size_t count_bits(const std::vector<std::uint32_t>& m) {
  std::size_t n = 0;
  for (std::uint32_t w : m) n += static_cast<std::size_t>(std::popcount(w));
  return n;
}

// The id of the k-th set bit (k < count_bits(m)).
inline std::uint32_t nth_bit(const std::vector<std::uint32_t>& m, std::size_t k) {
  for (std::size_t w = 0;; ++w) {
    const auto c = static_cast<std::size_t>(std::popcount(m[w]));
    if (k >= c) {
      k -= c;
      continue;
    }
    std::uint32_t bits = m[w];
    for (; k > 0; --k) bits &= bits - 1;
    return static_cast<std::uint32_t>(w * 32 + static_cast<std::size_t>(std::countr_zero(bits)));
  }
}

}  // namespace nextok::tools
