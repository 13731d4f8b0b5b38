// Lookaheads that open an anchored pattern (`^(?=X)(?!Y)R`): each tests the
// input from its start, so the pattern is a regular language, `^R` meet
// "a prefix matches X" minus "a prefix matches Y", which DFA products build
// exactly (Dfa::compile). Lookaround anywhere else stays unsupported.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace nextok::constraint::regex {

struct Lookahead {
  bool negative = false;
  std::string_view body;  // between "(?=" or "(?!" and its ')'
};

struct LeadingLookaheads {
  std::vector<Lookahead> tests;
  std::string_view rest;  // after the last lookahead
};

// The split of `pattern` when it is "^", then one or more lookahead groups,
// then a rest with no top-level '|' (which would leave the tests' scope);
// nullopt otherwise. `python`: Python syntax, where "[]" is no empty class.
std::optional<LeadingLookaheads> split_leading_lookaheads(std::string_view pattern,
                                                          bool python = false);

}  // namespace nextok::constraint::regex
