// The lexeme DFAs every grammar shares: any string, any number, any
// integer and the literals. They are built once per process, so the mask
// cache entries computed for them serve every schema and every request.
#pragma once

#include <memory>

#include "constraint/regex/dfa.hpp"

namespace nextok::constraint {

struct StandardDfas {
  std::shared_ptr<const Dfa> string, number, integer, true_, false_, null_, integer_strict, key;
  static constexpr int kCount = 8;

  static const StandardDfas& get();
  // 0..7 for the DFAs above, -1 for any other. `key` is any string in its
  // canonical spellings (object keys: one spelling per name).
  int id_of(const Dfa* d) const noexcept;
};

// RFC 8259 number text; the integer form also takes a zero fraction ("3.0"),
// which JSON Schema counts as an integer.
inline constexpr const char* kNumberRegex = R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)";
inline constexpr const char* kIntegerRegexText = R"(-?(0|[1-9][0-9]*)(\.0+)?)";
// Numbers that are fractions in every draft: a plain decimal with a nonzero
// digit after the point, or a normalized scientific form with a negative
// exponent (a nonzero digit times 10^-k is never integral).
inline constexpr const char* kFractionRegex =
    R"(-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*|-?[1-9](\.[0-9]+)?[eE]-0*[1-9][0-9]*)";
// Draft 4 counts only texts without a fraction as integers.
inline constexpr const char* kStrictIntegerRegexText = R"(-?(0|[1-9][0-9]*))";

}  // namespace nextok::constraint
