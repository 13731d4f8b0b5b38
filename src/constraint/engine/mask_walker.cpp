#include "constraint/engine/mask_walker.hpp"

#include "constraint/schema/standard_dfas.hpp"

namespace nextok::constraint {

MaskWalker::MaskWalker(const TokenTrie& trie, const Machine& m, MaskCaches caches)
    : trie_(trie), m_(m), caches_(caches), levels_(trie.max_depth() + 2) {}

void MaskWalker::allow_tokens(uint32_t node, std::span<uint32_t> mask) const {
  const auto& n = trie_.nodes()[node];
  const auto tokens = trie_.tokens();
  for (uint32_t k = 0; k < n.token_count; ++k) {
    const uint32_t id = tokens[n.first_token + k];
    mask[id >> 5] |= 1u << (id & 31);
  }
}

void MaskWalker::enter_lane(size_t d) {
  Level& l = levels_[d];
  l.lane = false;
  if (l.set.size() != 1) return;
  const auto cfg = l.set.config(0);
  if (cfg.back().kind != FrameKind::kLeaf && cfg.back().kind != FrameKind::kKey) return;
  l.lane = true;
  l.base_depth = static_cast<uint32_t>(d);
  l.top = cfg.back();
  l.base.assign(cfg.begin(), cfg.end());
}

void MaskWalker::materialize(const Level& lane, std::vector<Frame>& out) const {
  out = levels_[lane.base_depth].base;
  out.back() = lane.top;
}

bool MaskWalker::child(size_t d, uint8_t b) {
  Level& p = levels_[d - 1];
  Level& c = levels_[d];
  c.lane = false;
  if (p.lane) {
    const Dfa& dfa = m_.leaf_dfa(p.top);
    const int32_t q2 = dfa.next(p.top.q, b);
    if (q2 >= 0 && !dfa.final(q2)) {
      c.top = p.top;
      const auto& base = levels_[p.base_depth].base;
      const Frame* below = base.size() >= 2 ? &base[base.size() - 2] : nullptr;
      if (!m_.leaf_advance(below, c.top, b, q2)) return false;
      c.lane = true;
      c.base_depth = p.base_depth;
      return true;
    }
    // The lexeme ends here: the machine takes over.
    materialize(p, scratch_);
    c.set.clear();
    m_.step_one(scratch_, b, c.set);
  } else if (!m_.step(p.set, b, c.set)) {
    return false;
  }
  if (c.set.empty()) return false;
  enter_lane(d);
  return true;
}

void MaskWalker::walk_below(uint32_t node, std::span<uint32_t> mask) {
  const auto nodes = trie_.nodes();
  const uint32_t end = node == 0 ? static_cast<uint32_t>(nodes.size()) : nodes[node].end;
  for (uint32_t i = node + 1; i < end;) {
    const auto& n = nodes[i];
    if (!child(n.depth, n.byte)) {
      i = n.end;
      continue;
    }
    allow_tokens(i, mask);
    ++i;
  }
}

bool MaskWalker::cached(std::span<uint32_t> mask) {
  const Level& root = levels_[0];
  const Frame& top = root.top;
  const GrammarNode& node = m_.grammar().nodes[top.node];
  const Dfa& dfa = m_.leaf_dfa(top);
  bool counting = false;
  if (top.kind == FrameKind::kLeaf) {
    if (node.counts_chars) {
      counting = true;
      if (node.max_chars != kUnbounded && node.max_chars - top.n < trie_.max_depth()) return false;
    }
  } else if (node.additional == kNoNode) {
    // Without "any other key", the entry is exact only when every key the
    // state can still reach is available.
    const Frame& obj = root.base[root.base.size() - 2];
    if (m_.key_reach(node.key_dfa, top.q) & ~m_.available_keys(obj)) return false;
  }
  bool standard = false;
  for (int k = 0; k < StandardDfas::kCount; ++k) standard |= caches_.standard_dfas[k] == &dfa;
  LeafCache* cache = standard ? caches_.standard : caches_.grammar;
  const auto entry = cache->get(trie_, {&dfa, top.q, counting ? top.esc : uint8_t{0}, counting});
  for (size_t w = 0; w < mask.size(); ++w) mask[w] |= entry->inside[w];
  const auto nodes = trie_.nodes();
  for (const LeafExit& x : entry->exits) {
    const size_t depth = nodes[x.node].depth;
    Level& at = levels_[depth];
    scratch_ = root.base;
    Frame& t = scratch_.back();
    t.q = x.q;
    if (counting) t.n = top.n + x.chars;
    at.set.clear();
    if (x.before) {
      m_.step_one(scratch_, nodes[x.node].byte, at.set);
      if (at.set.empty()) continue;
    } else {
      if (!m_.pop(scratch_, 0)) continue;
      at.set.frames = scratch_;
      at.set.ends.assign(1, static_cast<uint32_t>(scratch_.size()));
    }
    enter_lane(depth);
    allow_tokens(x.node, mask);
    walk_below(x.node, mask);
  }
  return true;
}

void MaskWalker::allow(const ConfigSet& state, std::span<uint32_t> mask) {
  Level& root = levels_[0];
  root.set = state;
  enter_lane(0);
  if (root.lane && cached(mask)) return;
  walk_below(0, mask);
}

}  // namespace nextok::constraint
