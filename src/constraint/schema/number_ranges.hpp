// Regular expressions for JSON numbers restricted to a range: what the JSON
// Schema keywords minimum, maximum, exclusiveMinimum and exclusiveMaximum
// become for the constraint engine. The patterns use the ECMA-262 subset
// Dfa::compile reads and are meant for full-match use over a number's text
// (RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?).
//
// Semantics and limits:
// - Comparison is exact decimal arithmetic on digit strings; no floating
//   point is involved, so 0.1 is 0.1 and fractions of any length work.
// - Texts with an exponent are matched in normalized scientific form, one
//   nonzero digit before the point (1e-05, -2.5E+3: what serializers write),
//   compared exactly like plain ones. Other exponent spellings (12e3,
//   0.5e1) are never matched: a sound subset, since comparing them needs
//   counting a DFA cannot do. Integer-only ranges take no exponent form.
// - "-0" (and "-0.0", …) is never matched, although it is a valid spelling of
//   0: allowing it would let '-' start a number in a range without negative
//   values. 0 itself is matched as "0" (and "0.0", … where fractions are).
// - Bounds are rounded inward (toward the inside of the range) where exact
//   handling would only cost states: past 40 integer digits a bound keeps 4
//   significant digits (1.7976931348623157e308 acts as 1.797e308), beyond
//   10^400 a lower bound empties the range and an upper one acts as
//   9.999e399, and digits past the 400th fractional place round to that
//   place. The result stays sound but misses such extreme values.
// - Validators that parse numbers as doubles (Python jsonschema) may judge
//   texts within a few ulps of a bound differently; this follows the exact
//   decimal value, as JSON Schema specifies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nextok::constraint {

// One end of a range. value is a JSON number text ("0", "-1.5", "1e3");
// nullopt means unbounded on that side.
struct Bound {
  std::optional<std::string> value;
  bool exclusive = false;
};

// The JSON texts of the integers n with lo <= n <= hi (inclusive; nullopt is
// unbounded): no leading zeros, no fraction, no exponent. nullopt when no
// integer is in the range (lo > hi).
std::optional<std::string> integer_range_regex(std::optional<int64_t> lo,
                                               std::optional<int64_t> hi);

// The JSON number texts (plain, or normalized scientific unless
// integer_only) whose value v satisfies lo <= v (or
// lo < v when lo.exclusive) and v <= hi (or v < hi). With integer_only, only
// integer values, spelled as integers or with an all-zero fraction ("3",
// "3.0", "3.00"), since JSON Schema counts 3.0 as an integer. nullopt when
// the range holds no such text. Throws Error{kInvalidArgument, "bound"} when a
// bound is not a JSON number text.
std::optional<std::string> number_range_regex(const Bound& lo, const Bound& hi, bool integer_only);

}  // namespace nextok::constraint
