// Regular parts of a grammar as deterministic automata. A nonterminal whose
// derivations never recurse (or recurse only as `S ::= S x | y`, which is
// what repetitions expand to) has a regular language. Read by Earley as
// written, ambiguous regular parts cost work that grows with the input:
// `( [^.]+ )*` keeps one item per position where a run may have begun, so a
// mask after n bytes walks n items at every trie node. The same language as
// a DFA keeps one state per position; written back into the grammar as a
// left-linear grammar of that DFA (Q_q ::= Q_p b), its Earley sets stay the
// size of the state's out-edges whatever the input.
#pragma once

#include <optional>

#include "constraint/cfg/cfg.hpp"
#include "constraint/regex/dfa.hpp"

namespace nextok::constraint::cfg {

// What the rewriting may spend: an optimisation, so past its work (or its
// symbols) it stops and the grammar stays as written, never an error. Work
// is counted, not timed: which parts are rewritten, and so what every mask
// costs, must not depend on how busy the machine was while compiling.
struct FragmentBudget {
  size_t max_states = 256;
  size_t max_symbols = 50000;  // added to the grammar, all parts together
  // Subset construction's steps (NFA states visited, edges followed, byte
  // class checks, subset lookups), all automata together; real grammars
  // take under 2 million. Spent steps are subtracted.
  size_t work = 50'000'000;
};

// The byte DFA of the whole grammar when its root is regular and the
// automaton has at most budget.max_states states; nullopt otherwise.
// Spends budget.work.
std::optional<Dfa> regular_grammar_dfa(const Cfg& g, FragmentBudget& budget);

// Rewrites every maximal regular nonterminal reachable from the root (one
// under a non-regular one) where some input leaves two repetitions open at
// once and whose DFA
// has at most budget.max_states states as the left-linear grammar of that DFA
// (whose states are all predicted where it starts, so a part that cannot be
// ambiguous is cheaper as written). The language is unchanged.
void determinize_regular_fragments(Cfg& g, FragmentBudget& budget);

}  // namespace nextok::constraint::cfg
