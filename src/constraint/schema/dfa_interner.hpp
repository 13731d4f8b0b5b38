// Process-wide interning of the DFAs that schemas share (format, pattern and
// number-range automata): one compile per distinct regex, and since an
// interned DFA lives as long as the process, its per-state mask entries can
// sit in the vocabulary-wide cache and serve every schema that uses it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "constraint/regex/dfa.hpp"

namespace nextok::constraint {

struct InternedDfa {
  std::shared_ptr<const Dfa> dfa;
  bool shared = false;  // false once the interner is full: owned by the caller only
};

// `key` must determine the DFA (the regex and its options).
InternedDfa intern_dfa(const std::string& key, const std::function<Dfa()>& build);
// By content: an equal DFA interned before (by either function) is returned
// instead, so independently built automata share their mask entries.
InternedDfa intern_dfa(std::shared_ptr<const Dfa> d);

}  // namespace nextok::constraint
