#include "constraint/trie/free_text_masks.hpp"

#include <algorithm>

namespace nextok::constraint {

namespace {
bool has(const TokenTrie::Bytes& set, uint8_t b) {
  return ((set[b >> 6] >> (b & 63)) & 1) != 0;
}
void set_ids(std::span<const uint32_t> ids, uint32_t* m) {
  for (const uint32_t id : ids) m[id >> 5] |= 1u << (id & 31);
}
}  // namespace

std::span<const uint32_t> FreeTextMasks::get(const TokenTrie& trie, const TokenTrie::Bytes& first,
                                             const TokenTrie::Bytes& loop, bool utf8_closed) {
  for (const Entry& e : entries_) {
    if (e.trie == &trie && e.first == first && e.loop == loop && e.closed == utf8_closed) {
      return e.mask;
    }
  }
  if (entries_.size() < kKept) {
    entries_.emplace_back();
    next_ = entries_.size() - 1;
  }
  Entry& e = entries_[next_];
  next_ = (next_ + 1) % kKept;
  e.trie = &trie;
  e.first = first;
  e.loop = loop;
  e.closed = utf8_closed;
  e.mask.assign((trie.vocab_size() + 31) / 32, 0);
  // The walk kept to the paths that stay in the state: the same nodes and
  // the same fit() tests.
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  uint32_t* m = e.mask.data();
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    if (!has(n.depth == 1 ? first : loop, n.byte)) {
      i = n.end;
      continue;
    }
    if (n.end > i + 1 && fits(loop, utf8_closed, below[i], utf8[i])) {
      set_ids(trie.subtree_tokens(i), m);
      i = n.end;
      continue;
    }
    set_ids(tokens.subspan(n.first_token, n.token_count), m);
    ++i;
  }
  return e.mask;
}

}  // namespace nextok::constraint
