// The `regex` format: a sound subset of ECMA-262 pattern syntax that is
// valid in both ECMA-262 modes (with and without the u flag) and for Python's
// re (what validators check it with). Regular because group nesting is
// bounded (kDepth levels); the rest leaves out what the dialects disagree on:
// - atoms: literal characters other than the syntax characters, '.', escapes
//   of classes (\d \w \s and negations), controls (\n \r \t \f \v), \uXXXX,
//   \xXX and identity escapes of syntax characters and '/';
// - assertions ^ $ \b \B, not quantified;
// - groups ( ) and (?: ); no lookaround, no named groups (their syntax
//   differs), no backreferences;
// - classes [ ] and [^ ] with at least one member; '-' only first or last
//   or in a range of digits or same-case letters in order; no '&', '~' or
//   '|' unescaped inside (Python reserves doubled ones); '^' only as the
//   negation (escaped elsewhere);
// - quantifiers * + ? {n} {n,} {n,m} (n < 1000; n <= m checked where m has
//   more digits, or both are one digit), each optionally lazy.
#include <string>

#include "constraint/schema/formats.hpp"

namespace nextok::constraint {

namespace {

constexpr int kDepth = 3;

// Ranges X-Y with X <= Y among digits, lowercase and uppercase letters.
std::string class_ranges() {
  std::string out;
  for (const auto& [lo, hi] : {std::pair{'0', '9'}, std::pair{'a', 'z'}, std::pair{'A', 'Z'}}) {
    for (char x = lo; x <= hi; ++x) {
      if (!out.empty()) out += '|';
      out += x;
      out += "-[";
      out += x;
      out += '-';
      out += hi;
      out += ']';
    }
  }
  return "(?:" + out + ")";
}

std::string quantifier() {
  const std::string n = "(?:0|[1-9][0-9]{0,2})";
  std::string pairs;  // one-digit n <= m
  for (char x = '0'; x <= '9'; ++x) {
    if (!pairs.empty()) pairs += '|';
    pairs += x;
    pairs += ",[";
    pairs += x;
    pairs += "-9]";
  }
  const std::string longer =  // m has more digits than n
      "[0-9],[1-9][0-9]{1,2}|[1-9][0-9],[1-9][0-9]{2}";
  return "(?:[*+?]|\\{" + n + ",?\\}|\\{(?:" + pairs + "|" + longer + ")\\})\\??";
}

}  // namespace

std::string regex_syntax() {
  const std::string hex = "[0-9a-fA-F]";
  const std::string code = "u" + hex + "{4}|x" + hex + "{2}";
  const std::string syntax = "\\\\^$.*+?()\\[\\]{}|/";
  const std::string literal = "[^\\\\^$.|?*+()\\[\\]{}]";
  const std::string escape = "\\\\(?:[dDwWsSnrtfv]|[" + syntax + "]|" + code + ")";
  const std::string class_escape = "\\\\(?:[dDwWsSnrtfvb]|[" + syntax + "\\-]|" + code + ")";
  // No unescaped '^' among the members: first it would be the negation
  // ("[^]" is no class in Python), elsewhere it is left out for that.
  const std::string class_char = "[^\\\\\\]\\[\\-&~|^]";
  const std::string member = "(?:" + class_ranges() + "|" + class_char + "|" + class_escape + ")";
  const std::string char_class = "\\[\\^?-?" + member + "+-?\\]";
  const std::string assertion = "(?:\\^|\\$|\\\\[bB])";
  const std::string quant = quantifier();
  std::string
      alternation;  // of the level below ('|' may stand anywhere: empty alternatives are valid)
  for (int d = 0; d <= kDepth; ++d) {
    std::string atom = "(?:" + literal + "|\\.|" + escape + "|" + char_class;
    if (d > 0) atom += "|\\((?:\\?:)?" + alternation + "\\)";
    atom += ")";
    alternation = "(?:" + atom + "(?:" + quant + ")?|" + assertion + "|\\|)*";
  }
  return alternation;
}

}  // namespace nextok::constraint
