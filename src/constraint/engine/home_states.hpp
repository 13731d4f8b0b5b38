// Per DFA state, found on first need: the bytes that lead straight back to
// it, and whether every well-formed UTF-8 character of two bytes or more
// does too (through live, non-final states). From such a state, a trie
// subtree whose bytes are all of these stays inside the lexeme, so its
// tokens can be set without walking it (free text under a string's content
// state).
#pragma once

#include <cstdint>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

class HomeStates {
 public:
  explicit HomeStates(const Dfa& d) : d_(d), known_(d.states(), 0), loop_(d.states()) {}

  // Every token below a trie node with these bytes below (and UTF-8 bits,
  // TokenTrie::utf8_below) stays inside when read from q, which is live and
  // not final.
  bool keeps(int32_t q, const TokenTrie::Bytes& below, uint8_t utf8) {
    const auto k = static_cast<size_t>(q);
    if (!known_[k]) learn_ascii(q);
    const TokenTrie::Bytes& loop = loop_[k];
    if ((below[0] & ~loop[0]) || (below[1] & ~loop[1])) return false;  // ASCII
    if ((below[2] | below[3]) == 0) return true;
    if (!(utf8 & 1)) return false;  // suffixes must be well-formed from a boundary
    // The character check costs thousands of steps: only for states whose
    // ASCII already keeps a subtree.
    if (known_[k] == kAscii) known_[k] = chars_home(q) ? kCharsHome : kCharsLeave;
    return known_[k] == kCharsHome;
  }

 private:
  static constexpr uint8_t kAscii = 1, kCharsHome = 2, kCharsLeave = 3;
  void learn_ascii(int32_t q);
  bool chars_home(int32_t q) const;

  const Dfa& d_;
  std::vector<uint8_t> known_;
  std::vector<TokenTrie::Bytes> loop_;
};

}  // namespace nextok::constraint
