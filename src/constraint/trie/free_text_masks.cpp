#include "constraint/trie/free_text_masks.hpp"

#include <array>
#include <bit>

namespace nextok::constraint {

FreeTextMasks::Mask FreeTextMasks::get(const TokenTrie& trie, const FreeText& state) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [s, m] : entries_) {
      if (s == state) return m;
    }
  }
  // Made outside the lock: two threads may both make one, the first kept.
  std::optional<Mask> fast = from_index(trie, state);
  Mask mask = fast ? std::move(*fast) : walk(trie, state);
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

FreeTextMasks::Mask FreeTextMasks::walk(const TokenTrie& trie, const FreeText& state) {
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
    __builtin_prefetch(nodes.data() + n.end);  // the next sibling (dfa_walker.cpp says why)
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

const FreeTextMasks::Index& FreeTextMasks::index(const TokenTrie& trie) {
  std::call_once(index_once_, [&] {
    constexpr size_t kKeys = 258, kWideFirst = 128, kLater = 129, kWideLater = 257;
    Index& x = index_;
    x.well_formed.assign((trie.vocab_size() + 31) / 32, 0u);
    // Per depth of the path: the UTF-8 state, the keys seen after the first
    // byte (ASCII bits, then a wide-character bit), and the first byte.
    struct At {
      int utf8 = 0;
      std::array<uint64_t, 3> later{};
    };
    std::vector<At> at(trie.max_depth() + 2);
    std::vector<std::pair<uint32_t, uint32_t>> pairs;  // key, token
    pairs.reserve(trie.tokens().size() * 8);
    const auto nodes = trie.nodes();
    const auto tokens = trie.tokens();
    uint8_t first = 0;
    for (size_t i = 1; i < nodes.size();) {
      const TokenTrie::Node& n = nodes[i];
      const At& up = at[n.depth - 1u];
      const int u = Utf8Reader::next(up.utf8, n.byte);
      if (u < 0 || n.depth == 255) {  // ill-formed below, or too deep to follow
        i = n.end;
        continue;
      }
      At& here = at[n.depth];
      here = {u, up.later};
      if (n.depth == 1) {
        first = n.byte;
      } else if (n.byte < 0x80) {
        here.later[n.byte >> 6] |= uint64_t{1} << (n.byte & 63);
      } else if (up.utf8 == 0) {
        here.later[2] = 1;
      }
      for (uint32_t t : tokens.subspan(n.first_token, n.token_count)) {
        x.well_formed[t >> 5] |= 1u << (t & 31);
        pairs.emplace_back(first < 0x80 ? first : kWideFirst, t);
        for (uint32_t w = 0; w < 2; ++w) {
          for (uint64_t bits = here.later[w]; bits != 0; bits &= bits - 1)
            pairs.emplace_back(kLater + 64 * w + static_cast<uint32_t>(std::countr_zero(bits)), t);
        }
        if (here.later[2]) pairs.emplace_back(kWideLater, t);
      }
      ++i;
    }
    x.begin.assign(kKeys + 1, 0);
    for (const auto& [key, t] : pairs) ++x.begin[key + 1];
    for (size_t k = 0; k < kKeys; ++k) x.begin[k + 1] += x.begin[k];
    x.ids.resize(pairs.size());
    std::vector<uint32_t> fill(x.begin.begin(), x.begin.end() - 1);
    for (const auto& [key, t] : pairs) x.ids[fill[key]++] = t;
  });
  return index_;
}

std::optional<FreeTextMasks::Mask> FreeTextMasks::from_index(const TokenTrie& trie,
                                                             const FreeText& state) {
  if (state.first[2] | state.first[3] | state.loop[2] | state.loop[3]) return std::nullopt;
  const Index& x = index(trie);
  const auto list = [&](size_t key) {
    return std::span(x.ids).subspan(x.begin[key], x.begin[key + 1] - x.begin[key]);
  };
  std::vector<size_t> drop;
  size_t cost = 0;
  const auto rule_out = [&](size_t key) {
    drop.push_back(key);
    cost += x.begin[key + 1] - x.begin[key];
  };
  for (uint32_t c = 0; c < 128; ++c) {
    if (!FreeText::has(state.first, static_cast<uint8_t>(c))) rule_out(c);
    if (!FreeText::has(state.loop, static_cast<uint8_t>(c))) rule_out(129 + c);
  }
  if (!state.first_wide) rule_out(128);
  if (!state.closed) rule_out(257);
  // Past a quarter of the vocabulary cleared bit by bit, the walk is as fast.
  if (cost > trie.vocab_size() / 4) return std::nullopt;
  auto out = std::make_shared<std::vector<uint32_t>>(x.well_formed);
  for (size_t key : drop) {
    for (uint32_t t : list(key)) (*out)[t >> 5] &= ~(1u << (t & 31));
  }
  return out;
}

}  // namespace nextok::constraint
