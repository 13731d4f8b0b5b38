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
  size_t max_states;
};

// The branches made pairwise disjoint, or nullopt when an overlap cannot be
// removed exactly (objects or arrays that may both match, strings with
// length bounds, numbers whose spellings the subtraction cannot cover).
std::optional<std::vector<uint32_t>> exclusive_branches(OneOfContext& c,
                                                        const std::vector<uint32_t>& branches);

}  // namespace nextok::constraint
