// The token-trie walk for a byte DFA (regex, choice, regular grammars),
// with what the Earley walker does for free text: a subtree whose bytes
// below all loop on the state (or are well-formed UTF-8 that the state
// reads back into itself) is set from the trie's token run without walking
// it, and where the walk's first bytes lead into a free-text state the
// tokens that stay there come from a kept mask (free_text_masks.hpp).
// Per-state facts (loop bytes, UTF-8 verdicts) are found on first use and
// kept, so a walker serves one DFA, one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/trie/free_text_masks.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

class DfaWalker {
 public:
  // ORs into mask every token whose bytes the DFA reads from state q
  // without dying (mask: bitmask_words(vocab) words).
  void allow(const TokenTrie& trie, const Dfa& dfa, int32_t q, std::span<uint32_t> mask);

 private:
  struct StateFacts {
    TokenTrie::Bytes loop{};  // bytes that lead back to the state (loop_hint_ says if known)
    int8_t closed = -1;       // every wide character leads back, -1 not yet known
  };
  struct RootFacts {
    int8_t known = 0;
    int32_t star = -1;  // the free-text state its first bytes lead to, or -1
    FreeText text;
    TokenTrie::Bytes loop_or_dead{};
  };
  const StateFacts& facts(int32_t s);
  bool closed(int32_t s);
  // Whether every character of two bytes or more read from `from` stays
  // live and ends in `home`.
  bool leads(int32_t from, int32_t home);
  const RootFacts& root_facts(int32_t q);
  // Whether every token below a node (state s; its bytes below, UTF-8
  // flags and subtree size) reads back into s.
  bool fits(int32_t s, const TokenTrie::Bytes& below, uint8_t utf8, size_t nodes);
  // kFree: the root leads into a free-text state; kSkip: some state loops.
  template <bool kFree, bool kSkip>
  void walk(const TokenTrie& trie, int32_t q, const RootFacts& root, std::span<uint32_t> mask);

  // A subtree this large is worth the UTF-8 check of its state.
  static constexpr size_t kUtf8CheckNodes = 256;
  const Dfa* dfa_ = nullptr;
  bool any_loop_ = false;
  std::vector<StateFacts> facts_;
  // Per state, read at every node: whether any byte loops on it.
  static constexpr uint8_t kUnknownLoop = 0, kNoLoop = 1, kLoops = 2;
  std::vector<uint8_t> loop_hint_;
  std::unordered_map<int32_t, RootFacts> roots_;  // by root state
  std::vector<int32_t> states_;                   // per depth of the current path
  std::vector<int8_t> kept_;                      // per depth: FreeText::next of the path
  std::vector<uint8_t> visited_;                  // leads(): (state, reader state) pairs
};

}  // namespace nextok::constraint
