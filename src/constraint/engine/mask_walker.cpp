#include "constraint/engine/mask_walker.hpp"
#include <chrono>

#include <algorithm>

#include "constraint/schema/standard_dfas.hpp"

namespace nextok::constraint {

MaskWalker::MaskWalker(const TokenTrie& trie, const Machine& m, MaskCaches caches)
    : trie_(trie), m_(m), caches_(caches), levels_(trie.max_depth() + 2) {}

void MaskWalker::allow_tokens(uint32_t node, std::span<uint32_t> mask) const {
  const auto& n = trie_.nodes()[node];
  set_token_bits(trie_.tokens().subspan(n.first_token, n.token_count), mask.data());
}

void MaskWalker::enter_lane(size_t d) {
  Level& l = levels_[d];
  l.lane = false;
  for (size_t k = 0; k < l.set.size(); ++k) {
    const FrameKind kind = l.set.config(k).back().kind;
    if (kind != FrameKind::kLeaf && kind != FrameKind::kKey) return;
  }
  l.lane = true;
  l.base_depth = static_cast<uint32_t>(d);
  l.base = l.set;
  l.tops.clear();
  for (size_t k = 0; k < l.set.size(); ++k) l.tops.push_back(l.set.config(k).back());
}

void MaskWalker::materialize(const Level& lane, size_t k, std::vector<Frame>& out) const {
  const auto cfg = levels_[lane.base_depth].base.config(k);
  out.assign(cfg.begin(), cfg.end());
  out.back() = lane.tops[k];
}

// Lanes: every configuration reads a lexeme, so a byte is a DFA step per
// configuration until some lexeme ends; then the machine takes over.
bool MaskWalker::child(size_t d, uint8_t b) {
  Level& p = levels_[d - 1];
  Level& c = levels_[d];
  c.lane = false;
  if (!p.lane) {
    if (!m_.step(p.set, b, c.set)) return false;
    enter_lane(d);
    return true;
  }
  const ConfigSet& base = levels_[p.base_depth].base;
  c.tops.resize(p.tops.size());
  bool alive = false, exits = false;
  for (size_t k = 0; k < p.tops.size(); ++k) {
    Frame& t = c.tops[k];
    t = p.tops[k];
    if (t.q < 0) continue;
    const Dfa& dfa = m_.leaf_dfa(t);
    const int32_t q2 = dfa.next(t.q, b);
    if (q2 >= 0 && !dfa.final(q2)) {
      const auto cfg = base.config(k);
      const Frame* below = cfg.size() >= 2 ? &cfg[cfg.size() - 2] : nullptr;
      if (m_.leaf_advance(below, t, b, q2)) {
        alive = true;
        continue;
      }
    } else if (q2 >= 0 || dfa.accepting(t.q)) {
      exits = true;
      continue;  // handled below, with the machine
    }
    t.q = -1;
  }
  if (!exits) {
    if (!alive) return false;
    c.lane = true;
    c.base_depth = p.base_depth;
    return true;
  }
  c.set.clear();
  c.base_depth = p.base_depth;  // materialize(c, k) reads the lane's base configurations
  for (size_t k = 0; k < p.tops.size(); ++k) {
    if (c.tops[k].q < 0) continue;
    const Dfa& dfa = m_.leaf_dfa(p.tops[k]);
    const int32_t q2 = dfa.next(p.tops[k].q, b);
    if (q2 >= 0 && !dfa.final(q2)) {
      materialize(c, k, scratch_);  // still inside its lexeme
      if (c.set.size() < Machine::kMaxConfigs) {
        c.set.frames.insert(c.set.frames.end(), scratch_.begin(), scratch_.end());
        c.set.ends.push_back(static_cast<uint32_t>(c.set.frames.size()));
      }
    } else {
      materialize(p, k, scratch_);
      m_.step_one(scratch_, b, c.set);
    }
  }
  m_.dedupe(c.set);
  if (c.set.empty()) return false;
  enter_lane(d);
  return true;
}

void MaskWalker::walk_below(uint32_t node, std::span<uint32_t> mask) {
  const auto nodes = trie_.nodes();
  const uint32_t end = node == 0 ? static_cast<uint32_t>(nodes.size()) : nodes[node].end;
  for (uint32_t i = node + 1; i < end;) {
    const auto& n = nodes[i];
    __builtin_prefetch(nodes.data() + n.end);  // the next sibling (dfa_walker.cpp says why)
    if (!child(n.depth, n.byte)) {
      i = n.end;
      continue;
    }
    allow_tokens(i, mask);
    ++i;
  }
}

// Trie nodes below `node` where key DFA state q reaches a final state on a
// path that can still spell a declared property.
void MaskWalker::declared_exits(const Dfa& d, uint32_t obj, uint32_t node, int32_t q) {
  const auto nodes = trie_.nodes();
  const uint32_t end = node == 0 ? static_cast<uint32_t>(nodes.size()) : nodes[node].end;
  for (uint32_t c = node + 1; c < end; c = nodes[c].end) {
    const int32_t q2 = d.next(q, nodes[c].byte);
    if (q2 < 0) continue;
    if (d.final(q2)) {
      overrides_.push_back({c, q2});
    } else if (m_.key_reach(obj, q2) & ~Machine::kOtherKey) {
      declared_exits(d, obj, c, q2);
    }
  }
}

// A token is allowed when one configuration accepts it, so a lane of
// several configurations is the union of each one's mask: cached entries
// where they apply, a walk of the trie for the others alone (a strict key
// beside any key: the strict one walks a small subtree, the other is cached).
void MaskWalker::cached(std::span<uint32_t> mask) {
  ConfigSet& rest = rest_;
  rest.clear();
  const Level& root = levels_[0];
  for (size_t k = 0; k < root.tops.size(); ++k) {
    if (cached_one(k, mask)) continue;
    const auto cfg = root.base.config(k);
    rest.frames.insert(rest.frames.end(), cfg.begin(), cfg.end());
    rest.ends.push_back(static_cast<uint32_t>(rest.frames.size()));
  }
  if (rest.empty()) return;
  levels_[0].set = rest;
  enter_lane(0);
  walk_below(0, mask);
}

bool MaskWalker::cached_one(size_t which, std::span<uint32_t> mask) {
  const Level& root = levels_[0];
  const Frame top = root.tops[which];
  const auto root_cfg = root.base.config(which);
  const GrammarNode& node = m_.grammar().nodes[top.node];
  const Dfa& dfa = m_.leaf_dfa(top);
  bool counting = false;
  uint32_t room = kUnbounded;  // code points a token may still add
  const LengthBounds* lengths = nullptr;
  if (top.kind == FrameKind::kLeaf) {
    // A value-id leaf's entry is exact only while it cannot end as a value
    // its array holds already.
    const Frame& below = root_cfg[root_cfg.size() - 2];
    if (!node.value_ids.empty() && below.kind == FrameKind::kArray &&
        (m_.value_reach(node.dfa, top.q) & below.seen) != 0) {
      return false;
    }
    if (node.counts_chars) {
      counting = true;
      lengths = m_.length_bounds(node.dfa);
      if (node.max_chars != kUnbounded) room = node.max_chars - top.n;
      // A pattern that bounds the length left: minLength needs the walk.
      if (!lengths->unbounded && top.n < node.min_chars) return false;
    }
  } else {
    // A key's entry is exact only when the key DFA alone decides each
    // token: every state ahead still reaches a key the object can take
    // (with "any other key", propertyNames or a declared name without a
    // value can still leave states that reach none). Exits are checked by
    // the machine below.
    const Frame& obj = root_cfg[root_cfg.size() - 2];
    if (!m_.key_reads_freely(top.node, top.q, m_.available_keys(obj))) return false;
  }
  const bool standard =
      m_.grammar().shared_dfa[top.kind == FrameKind::kKey ? node.key_dfa : node.dfa];
  std::shared_ptr<const LeafEntry> entry;
  int32_t other_final = -1;
  overrides_.clear();
  if (top.kind == FrameKind::kKey && node.additional != kNoNode && node.pattern_props.empty() &&
      !node.props.empty() && node.props.size() < 63 && !node.names_restricted) {
    // Any name may be read, so the key reads like any string: share that
    // entry. Its exits resolve as "other" except where the bytes complete
    // a declared name, found by following only declared-name paths.
    const Dfa& any = *caches_.standard_dfas[7];  // StandardDfas::key
    entry = caches_.standard->get(trie_, {&any, static_cast<int32_t>(top.n), 0, false});
    other_final = m_.other_final(node.key_dfa);
    declared_exits(dfa, top.node, 0, top.q);
    std::sort(overrides_.begin(), overrides_.end());
  } else {
    LeafCache* cache = standard ? caches_.standard : caches_.grammar;
    entry = cache->get(trie_, {&dfa, top.q, counting ? top.esc : uint8_t{0}, counting}, lengths);
  }
  if (room < LeafEntry::kShortChars) {
    for (uint32_t k = 0; k <= room; ++k) {
      for (size_t w = 0; w < mask.size(); ++w) mask[w] |= entry->short_inside[k][w];
    }
  } else {
    for (size_t w = 0; w < mask.size(); ++w) mask[w] |= entry->inside[w];
    if (room < trie_.max_depth()) {
      for (const auto& [id, chars] : entry->long_inside) {
        if (chars > room) mask[id >> 5] &= ~(1u << (id & 31));
      }
    }
  }
  const auto nodes = trie_.nodes();
  memo_.clear();
  for (const LeafExit& x : entry->exits) {
    if (counting && x.chars > room) continue;
    int32_t q = x.q;
    if (other_final >= 0) {
      const auto it =
          std::lower_bound(overrides_.begin(), overrides_.end(), std::pair{x.node, int32_t{-1}});
      q = it != overrides_.end() && it->first == x.node ? it->second : other_final;
    }
    const uint32_t n = counting ? top.n + x.chars : top.n;
    const int byte = x.before ? nodes[x.node].byte : -1;
    // Exits that end the lexeme the same way share the machine's answer.
    auto m = std::find_if(memo_.begin(), memo_.end(), [&](const ExitMemo& e) {
      return e.q == q && e.n == n && e.byte == byte;
    });
    if (m == memo_.end()) {
      memo_.push_back({q, n, byte, {}});
      m = memo_.end() - 1;
      scratch_.assign(root_cfg.begin(), root_cfg.end());
      scratch_.back().q = q;
      scratch_.back().n = n;
      if (x.before) {
        m_.step_one(scratch_, static_cast<uint8_t>(byte), m->set);
      } else if (m_.pop(scratch_, 0)) {
        m->set.frames = scratch_;
        m->set.ends.assign(1, static_cast<uint32_t>(scratch_.size()));
      }
    }
    if (m->set.empty()) continue;
    const size_t depth = nodes[x.node].depth;
    levels_[depth].set = m->set;
    enter_lane(depth);
    allow_tokens(x.node, mask);
    walk_below(x.node, mask);
  }
  return true;
}

namespace {

void append(std::string& key, const void* p, size_t n) {
  key.append(static_cast<const char*>(p), n);
}

}  // namespace

void MaskWalker::allow(const ConfigSet& state, std::span<uint32_t> mask) {
  // The whole mask may be known for this exact configuration.
  key_.clear();
  for (uint32_t e : state.ends) append(key_, &e, sizeof e);
  for (const Frame& f : state.frames) {
    append(key_, &f.node, sizeof f.node);
    append(key_, &f.q, sizeof f.q);
    append(key_, &f.n, sizeof f.n);
    append(key_, &f.cur, sizeof f.cur);
    append(key_, &f.seen, sizeof f.seen);
    const uint8_t small[3] = {f.ws, f.esc, static_cast<uint8_t>(f.kind)};
    append(key_, small, sizeof small);
  }
  if (auto hit = caches_.configs->find(key_)) {
    for (size_t w = 0; w < mask.size(); ++w) mask[w] |= (*hit)[w];
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fresh_.assign(mask.size(), 0);
  compute(state, fresh_);
  for (size_t w = 0; w < mask.size(); ++w) mask[w] |= fresh_[w];
  // Worth keeping only when it was not cheap to compute.
  if (std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(15))
    caches_.configs->put(key_, fresh_);
}

void MaskWalker::compute(const ConfigSet& state, std::span<uint32_t> mask) {
  Level& root = levels_[0];
  root.set = state;
  enter_lane(0);
  if (root.lane) return cached(mask);
  walk_below(0, mask);
}

}  // namespace nextok::constraint
