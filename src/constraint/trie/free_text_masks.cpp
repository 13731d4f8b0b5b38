#include "constraint/trie/free_text_masks.hpp"

namespace nextok::constraint {

FreeTextMasks::Mask FreeTextMasks::get(const TokenTrie& trie, const FreeText& state) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [s, m] : entries_) {
      if (s == state) return m;
    }
  }
  // Made outside the lock: two threads may both make one, the first kept.
  Mask mask = make(trie, state);
  std::lock_guard lock(mu_);
  for (const auto& [s, m] : entries_) {
    if (s == state) return m;
  }
  ++made_;
  if (entries_.size() < kKept) {
    entries_.emplace_back(state, mask);
  } else {
    entries_[next_] = {state, mask};
    next_ = (next_ + 1) % kKept;
  }
  return mask;
}

size_t FreeTextMasks::made() const {
  std::lock_guard lock(mu_);
  return made_;
}

FreeTextMasks::Mask FreeTextMasks::make(const TokenTrie& trie, const FreeText& state) {
  auto out = std::make_shared<std::vector<uint32_t>>((trie.vocab_size() + 31) / 32, 0u);
  // Depth first, kept to the paths that stay in the state; k[d]: where the
  // path of depth d is (FreeText::next).
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  std::vector<int8_t> k(258, 0);
  uint32_t* m = out->data();
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
  return out;
}

}  // namespace nextok::constraint
