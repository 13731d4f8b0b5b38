// The regex syntax tree and its parser: the ECMA-262 subset JSON Schema
// `pattern` uses (no flags, no backreferences or lookaround), over code points.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace nextok::constraint::regex {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// A set of code points as sorted, disjoint, inclusive ranges.
using CodeSet = std::vector<std::pair<uint32_t, uint32_t>>;

struct Node {
  // kInputStart and kInputEnd are ^ and $: zero-width assertions that the
  // position is the input's first or last (no multiline flag).
  enum Kind { kSet, kConcat, kAlt, kRepeat, kEmpty, kInputStart, kInputEnd } kind;
  CodeSet set;
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = 0;  // kRepeat; max < 0 = unbounded
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make(Node::Kind k);

// How a pattern is read. `unicode`: \d, \w and \s take their Unicode
// meanings (see RegexOptions). `python`: Python's `re` for str patterns
// instead of ECMA-262: `.` excludes only '\n', \s is str.isspace(),
// (?P<name>...) groups, (?flags) and (?flags:...) with the flags i, s and a,
// {,n}, \A, \Z and \U; implies `unicode` unless the a flag is given.
// `ignore_case`, `dot_all`: the i and s flags from the start.
struct Syntax {
  bool unicode = false;
  bool python = false;
  bool ignore_case = false;
  bool dot_all = false;
};

// The tree of `pattern` (always a kAlt at the root). Throws
// Error{kInvalidArgument, "pattern"} on a syntax error and
// Error{kUnsupported, "pattern"} on what a DFA cannot express.
NodePtr parse(std::string_view pattern, const Syntax& syntax);
inline NodePtr parse(std::string_view pattern, bool unicode) {
  return parse(pattern, Syntax{.unicode = unicode});
}

// Sorted, with overlapping and adjacent ranges merged.
CodeSet normalized(CodeSet set);

// The set with every code point's simple case variants added (Python's
// IGNORECASE for str patterns: code points whose lowercase forms agree).
CodeSet case_closed(const CodeSet& set);

}  // namespace nextok::constraint::regex
