// oneOf whose branches overlap only in lexemes (strings, numbers,
// literals): each branch's leaves lose the texts another branch also
// matches, so the branches become disjoint and "exactly one" is an anyOf.
// {"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]}
// becomes string | number: null matches both branches, so no instance has it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "constraint/schema/grammar.hpp"
#include "constraint/schema/standard_dfas.hpp"

namespace nextok::constraint {

struct OneOfContext {
  Grammar& g;
  const StandardDfas& sd;
  const std::set<uint32_t>& pending;  // nodes still being compiled (recursion)
  std::function<uint32_t(std::shared_ptr<const Dfa>)> add_dfa;
  std::function<uint32_t(GrammarNode)> add_node;
  std::function<void()> tick;  // throws past the compile budget
  size_t max_states;
};

// JSON strings whose characters are spelled the way pattern, format and enum
// DFAs spell them (raw UTF-8, the escapes JSON requires): with no set that
// spans every code point, no \uXXXX spelling of a printable character. A
// value such a DFA matches has all its spellings of this kind in it, so
// subtracting it from a DFA cut down to these spellings removes the value.
const Dfa& plain_spelled_strings();
// Number texts without exponent: every value's spellings of this kind are
// in the integer DFA and in number_spellings() of that value.
const Dfa& plain_decimals();

// The branches made pairwise disjoint, or nullopt when an overlap cannot be
// removed exactly (objects or arrays that may both match, strings with
// length bounds, numbers whose spellings the subtraction cannot cover).
// Objects told apart by a property only where it is present (not required
// everywhere) split into that property present and absent, and the absent
// parts are made exclusive in turn (depth: that recursion's).
std::optional<std::vector<uint32_t>> exclusive_branches(OneOfContext& c,
                                                        const std::vector<uint32_t>& branches,
                                                        int depth = 0);

}  // namespace nextok::constraint
