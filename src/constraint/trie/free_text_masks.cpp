#include "constraint/trie/free_text_masks.hpp"

namespace nextok::constraint {

std::span<const uint32_t> FreeTextMasks::get(const TokenTrie& trie, const FreeText& state) {
  for (const Entry& e : entries_) {
    if (e.trie == &trie && e.state == state) return e.mask;
  }
  if (entries_.size() < kKept) {
    entries_.emplace_back();
    next_ = entries_.size() - 1;
  }
  Entry& e = entries_[next_];
  next_ = (next_ + 1) % kKept;
  e.trie = &trie;
  e.state = state;
  e.mask.assign((trie.vocab_size() + 31) / 32, 0);
  // Depth first, kept to the paths that stay in the state; k[d]: where the
  // path of depth d is (FreeText::next).
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  std::vector<int8_t> k(258, 0);
  uint32_t* m = e.mask.data();
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    const int here = state.next(k[n.depth - 1u], n.byte, n.depth == 1);
    if (here < 0) {
      i = n.end;
      continue;
    }
    k[n.depth] = static_cast<int8_t>(here);
    if (n.end > i + 1 && state.all_below(here, below[i], utf8[i])) {
      set_token_bits(trie.subtree_tokens(i), m);
      i = n.end;
      continue;
    }
    set_token_bits(tokens.subspan(n.first_token, n.token_count), m);
    ++i;
  }
  return e.mask;
}

}  // namespace nextok::constraint
