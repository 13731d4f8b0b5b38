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

// The tree of `pattern` (always a kAlt at the root). Throws
// Error{kInvalidArgument, "pattern"} on a syntax error and
// Error{kUnsupported, "pattern"} on what a DFA cannot express. `unicode`:
// \d, \w and \s take their Unicode meanings (see RegexOptions).
NodePtr parse(std::string_view pattern, bool unicode);

}  // namespace nextok::constraint::regex
