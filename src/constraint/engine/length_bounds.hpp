// How many code points a counting string DFA can still read before its
// string closes, per (state, escape phase).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "constraint/engine/code_points.hpp"
#include "constraint/regex/dfa.hpp"

namespace nextok::constraint {

// For a string DFA read with code-point counting: from each (state, escape
// phase), the fewest and the most code points that can still come before
// the string closes (kUnbounded: no limit). Length checks use them so that
// minLength/maxLength with a pattern never admit a prefix that cannot end.
struct LengthBounds {
  static constexpr int kPhases = kEscapePhases;  // Frame::esc values
  std::vector<uint32_t> min_rem, max_rem;        // [state * kPhases + esc]
  bool unbounded = true;  // every non-final state can still grow without limit
  uint32_t min_at(int32_t q, uint8_t esc) const noexcept {
    return min_rem[static_cast<size_t>(q) * kPhases + esc];
  }
  uint32_t max_at(int32_t q, uint8_t esc) const noexcept {
    return max_rem[static_cast<size_t>(q) * kPhases + esc];
  }
  static LengthBounds of(const Dfa& d);
  static std::shared_ptr<const LengthBounds> shared_of(const Dfa& d);
};

}  // namespace nextok::constraint
