#include "constraint/trie/dfa_walker.hpp"

#include <bit>

namespace nextok::constraint {

namespace {
void add(TokenTrie::Bytes& set, unsigned b) {
  set[b >> 6] |= uint64_t{1} << (b & 63);
}
}  // namespace

const DfaWalker::StateFacts& DfaWalker::facts(int32_t s) {
  StateFacts& f = facts_[static_cast<size_t>(s)];
  uint8_t& hint = loop_hint_[static_cast<size_t>(s)];
  if (hint == kUnknownLoop) {
    for (unsigned b = 0; b < 256; ++b) {
      if (dfa_->next(s, static_cast<uint8_t>(b)) == s) add(f.loop, b);
    }
    hint = (f.loop[0] | f.loop[1] | f.loop[2] | f.loop[3]) != 0 ? kLoops : kNoLoop;
  }
  return f;
}

bool DfaWalker::leads(int32_t from, int32_t home) {
  const Dfa& dfa = *dfa_;
  visited_.assign(dfa.states() * Utf8Reader::kStates, 0);
  std::vector<std::pair<int32_t, int>> todo;
  const auto visit = [&](int32_t x, int r) {
    const size_t key = static_cast<size_t>(x) * Utf8Reader::kStates + static_cast<size_t>(r);
    if (visited_[key] == 0) {
      visited_[key] = 1;
      todo.emplace_back(x, r);
    }
  };
  for (unsigned b = 0xC2; b <= 0xF4; ++b) {
    const int32_t x = dfa.next(from, static_cast<uint8_t>(b));
    if (x < 0) return false;
    visit(x, Utf8Reader::next(0, static_cast<uint8_t>(b)));
  }
  while (!todo.empty()) {
    const auto [x, r] = todo.back();
    todo.pop_back();
    for (unsigned c = 0x80; c <= 0xBF; ++c) {
      const int r2 = Utf8Reader::next(r, static_cast<uint8_t>(c));
      if (r2 < 0) continue;
      const int32_t y = dfa.next(x, static_cast<uint8_t>(c));
      if (y < 0 || (r2 == 0 && y != home)) return false;
      if (r2 > 0) visit(y, r2);
    }
  }
  return true;
}

bool DfaWalker::closed(int32_t s) {
  StateFacts& f = facts_[static_cast<size_t>(s)];
  if (f.closed < 0) f.closed = leads(s, s) ? 1 : 0;
  return f.closed == 1;
}

const DfaWalker::RootFacts& DfaWalker::root_facts(int32_t q) {
  RootFacts& r = roots_[q];
  if (r.known != 0) return r;
  r.known = 1;
  const Dfa& dfa = *dfa_;
  // The child most ASCII first bytes lead to.
  FreeTextVotes votes;
  for (unsigned b = 0; b < 128; ++b) {
    const int32_t c = dfa.next(q, static_cast<uint8_t>(b));
    if (c >= 0) votes.add(c, 1);
  }
  const auto [star, best] = votes.best();
  if (best < FreeText::kMinAscii) return r;
  const TokenTrie::Bytes loop = facts(star).loop;
  if (std::popcount(loop[0]) + std::popcount(loop[1]) < FreeText::kMinAscii) return r;
  r.star = star;
  r.text.loop = loop;
  for (unsigned b = 0; b < 256; ++b) {
    if (dfa.next(q, static_cast<uint8_t>(b)) == star) add(r.text.first, b);
    if (dfa.next(star, static_cast<uint8_t>(b)) < 0) add(r.loop_or_dead, b);
  }
  for (size_t w = 0; w < 4; ++w) r.loop_or_dead[w] |= loop[w];
  r.text.closed = closed(star);
  r.text.first_wide = q == star ? r.text.closed : leads(q, star);
  return r;
}

bool DfaWalker::fits(int32_t s, const TokenTrie::Bytes& below, uint8_t utf8, size_t nodes) {
  const StateFacts& f = facts(s);
  if (loop_hint_[static_cast<size_t>(s)] == kNoLoop) return false;
  if (FreeText::inside(below, f.loop)) return true;
  if ((utf8 & 1) == 0 || !FreeText::inside({below[0], below[1], 0, 0}, f.loop)) return false;
  if (f.closed >= 0) return f.closed == 1;
  // The check walks the state's wide characters once: worth it only where
  // it may save walking a large subtree.
  if (nodes < kUtf8CheckNodes) return false;
  return closed(s);
}

template <bool kFree, bool kSkip>
void DfaWalker::walk(const TokenTrie& trie, int32_t q, const RootFacts& root,
                     std::span<uint32_t> mask) {
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  const int32_t* table = dfa_->table().data();
  states_.assign(trie.max_depth() + 2, Dfa::kDead);
  states_[0] = q;
  if constexpr (kFree) {
    kept_.assign(trie.max_depth() + 2, -1);
    kept_[0] = 0;
  }
  int32_t* states = states_.data();
  const uint8_t* hint = loop_hint_.data();
  uint32_t* m = mask.data();
  for (size_t i = 1; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    // The next sibling: where a skip or the subtree's end goes, a cache
    // miss in a cold trie that this overlaps with the node's own work.
    __builtin_prefetch(nodes.data() + n.end);
    const size_t d = n.depth;
    const int32_t s = table[static_cast<size_t>(states[d - 1]) * 256 + n.byte];
    if (s < 0) {
      i = n.end;
      continue;
    }
    states[d] = s;
    if constexpr (kFree) {
      // A path that has stayed in the free-text state: its tokens are in
      // the kept mask, and so are all a subtree gives whose bytes below
      // stay there or die there.
      const int k = kept_[d - 1];
      const int here = k >= 0 ? root.text.next(k, n.byte, d == 1) : -1;
      kept_[d] = static_cast<int8_t>(here);
      if (here >= 0) {
        const bool whole = (here == 0 && FreeText::inside(below[i], root.loop_or_dead)) ||
                           root.text.all_below(here, below[i], utf8[i]);
        i = whole ? n.end : i + 1;
        continue;
      }
    }
    // Most states loop on nothing: one byte says so before the call.
    if (kSkip && n.end > i + 1 && hint[s] != kNoLoop && fits(s, below[i], utf8[i], n.end - i)) {
      set_token_bits(trie.subtree_tokens(i), m);
      i = n.end;
      continue;
    }
    set_token_bits(tokens.subspan(n.first_token, n.token_count), m);
    ++i;
  }
}

void DfaWalker::allow(const TokenTrie& trie, const Dfa& dfa, int32_t q, std::span<uint32_t> mask) {
  if (dfa_ != &dfa) {
    dfa_ = &dfa;
    facts_.assign(dfa.states(), StateFacts{});
    // With no state that reads a byte back into itself there is no
    // subtree to skip, and the walk is the plain one.
    const auto table = dfa.table();
    any_loop_ = false;
    for (size_t k = 0; k < table.size() && !any_loop_; ++k) {
      any_loop_ = table[k] == static_cast<int32_t>(k / 256);
    }
    loop_hint_.assign(dfa.states(), kUnknownLoop);
    roots_.clear();
  }
  if (q < 0) return;
  const RootFacts& root = root_facts(q);
  if (root.star < 0) {
    if (any_loop_) {
      walk<false, true>(trie, q, root, mask);
    } else {
      walk<false, false>(trie, q, root, mask);
    }
    return;
  }
  trie.free_text_masks().add_to(trie, root.text, mask);
  walk<true, true>(trie, q, root, mask);
}

}  // namespace nextok::constraint
