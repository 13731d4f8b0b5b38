// A byte automaton written into the grammar IR as rules, for the front-ends
// that build a language as a DFA first (Lark's terminals and %ignore runs,
// the leaves of an embedded JSON Schema).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "constraint/cfg/cfg_builder.hpp"

namespace nextok::constraint {
class Dfa;
}

namespace nextok::constraint::cfg {

// States x 256 (-1 for none), a start and the accepting states.
struct Automaton {
  size_t states = 0;
  int32_t start = -1;
  std::vector<int32_t> next;
  std::vector<uint8_t> accepting;
  int32_t at(size_t q, unsigned b) const { return next[q * 256 + b]; }
  static Automaton of(const Dfa& d);
};

// What `a` reads, as a left-linear (so, for a DFA, unambiguous) sub-grammar:
// per state q, "reached q" ::= "reached p" byte-of(p to q). The start's
// first visit is its own nonterminal deriving nothing, and the bytes read
// from it are limited to `first` when given. Returns the "reached"
// nonterminals and, last, the one for the start's first visit.
std::vector<uint32_t> reach(CfgBuilder& b, const Automaton& a, size_t at, const ByteSet* first);

// The strings `a` accepts (first byte within `first`, if given); nullopt
// when there are none. An automaton met before (same content, same
// `first`) gets the rules written for it then.
std::optional<Symbol> accepted(CfgBuilder& b, const Automaton& a, size_t at, const ByteSet* first);
// The same, always writing new rules.
std::optional<Symbol> accepted_once(CfgBuilder& b, const Automaton& a, size_t at,
                                    const ByteSet* first);

}  // namespace nextok::constraint::cfg
