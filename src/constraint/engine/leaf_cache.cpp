#include "constraint/engine/leaf_cache.hpp"

#include "constraint/engine/code_points.hpp"
#include "constraint/engine/machine.hpp"
#include "nextok/mask.hpp"

namespace nextok::constraint {

namespace {

// The walk without code-point counting: one DFA state per depth, and the
// final/accepting flags read from the DFA's arrays (the common, hot case).
void walk_plain(const TokenTrie& trie, const Dfa& d, int32_t q0, LeafEntry& e) {
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  const auto table = d.table();
  std::vector<int32_t> at(trie.max_depth() + 1);
  at[0] = q0;
  uint32_t* inside = e.inside.data();
  for (size_t i = 1; i < nodes.size();) {
    const auto& node = nodes[i];
    const int32_t parent = at[node.depth - 1u];
    const int32_t q2 = table[static_cast<size_t>(parent) * 256 + node.byte];
    if (q2 < 0) {
      if (d.accepting(parent)) e.exits.push_back({static_cast<uint32_t>(i), parent, 0, true});
      i = node.end;
      continue;
    }
    if (d.final(q2)) {
      e.exits.push_back({static_cast<uint32_t>(i), q2, 0, false});
      i = node.end;
      continue;
    }
    at[node.depth] = q2;
    for (uint32_t k = 0; k < node.token_count; ++k) {
      const uint32_t id = tokens[node.first_token + k];
      inside[id >> 5] |= 1u << (id & 31);
    }
    ++i;
  }
}

}  // namespace

std::shared_ptr<const LeafEntry> build_leaf_entry(const TokenTrie& trie, const LeafKey& key,
                                                  const LengthBounds* lengths) {
  auto e = std::make_shared<LeafEntry>();
  e->inside.assign(bitmask_words(trie.vocab_size()), 0);
  const Dfa& d = *key.dfa;
  if (!key.counting) {
    walk_plain(trie, d, key.q, *e);
    return e;
  }
  e->short_inside.assign(LeafEntry::kShortChars, std::vector<uint32_t>(e->inside.size(), 0));
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  // The lexeme state after each depth of the current path (compact: this
  // loop visits every trie node the DFA lets through).
  struct At {
    int32_t q;
    uint32_t n;
    uint8_t esc;
  };
  std::vector<At> at(trie.max_depth() + 1);
  at[0] = {key.q, 0, key.esc};
  const auto table = d.table();
  for (size_t i = 1; i < nodes.size();) {
    const auto& node = nodes[i];
    const At parent = at[node.depth - 1u];
    const int32_t q2 = table[static_cast<size_t>(parent.q) * 256 + node.byte];
    if (q2 < 0) {
      if (d.accepting(parent.q)) {
        e->exits.push_back({static_cast<uint32_t>(i), parent.q, parent.n, true});
      }
      i = node.end;
      continue;
    }
    const uint8_t step = kCodePointSteps[parent.esc][node.byte];
    const At f{q2, parent.n + (step >> 4), static_cast<uint8_t>(step & 15)};
    at[node.depth] = f;
    if (d.final(q2)) {
      e->exits.push_back({static_cast<uint32_t>(i), q2, f.n, false});
      i = node.end;
      continue;
    }
    for (uint32_t k = 0; k < node.token_count; ++k) {
      const uint32_t id = tokens[node.first_token + k];
      e->inside[id >> 5] |= 1u << (id & 31);
      const uint32_t need = f.n + (lengths ? lengths->min_at(f.q, f.esc) : 0);
      if (need >= LeafEntry::kShortChars) {
        e->long_inside.push_back({id, need});
      } else {
        e->short_inside[need][id >> 5] |= 1u << (id & 31);
      }
    }
    ++i;
  }
  return e;
}

std::shared_ptr<const LeafEntry> LeafCache::get(const TokenTrie& trie, const LeafKey& key,
                                                const LengthBounds* lengths) {
  {
    std::lock_guard lock(mu_);
    if (auto it = map_.find(key); it != map_.end()) return it->second;
    if (auto it = pinned_.find(key); it != pinned_.end()) return it->second;
  }
  auto e = build_leaf_entry(trie, key, lengths);
  const size_t cost = leaf_entry_bytes(*e);
  std::lock_guard lock(mu_);
  if (cost > max_bytes_) return e;
  if (bytes_ + cost > max_bytes_) {
    map_.clear();
    bytes_ = 0;
    ++restarts_;
  }
  if (map_.emplace(key, e).second) bytes_ += cost;
  return e;
}

void LeafCache::pin(const TokenTrie& trie, const LeafKey& key) {
  auto e = build_leaf_entry(trie, key, nullptr);
  std::lock_guard lock(mu_);
  pinned_.emplace(key, std::move(e));
}

size_t LeafCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t LeafCache::restarts() const {
  std::lock_guard lock(mu_);
  return restarts_;
}

size_t leaf_entry_bytes(const LeafEntry& e) {
  constexpr size_t kMapNodeBytes = 64;
  size_t b = sizeof(LeafEntry) + kMapNodeBytes + e.inside.capacity() * sizeof(uint32_t) +
             e.exits.capacity() * sizeof(LeafExit) +
             e.long_inside.capacity() * sizeof(e.long_inside[0]);
  for (const auto& s : e.short_inside) b += sizeof(s) + s.capacity() * sizeof(uint32_t);
  return b;
}

std::shared_ptr<const std::vector<uint32_t>> ConfigMaskCache::find(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : it->second;
}

void ConfigMaskCache::put(const std::string& key, std::vector<uint32_t> mask) {
  const size_t cost = key.size() + mask.size() * sizeof(uint32_t) + 64;
  std::lock_guard lock(mu_);
  if (bytes_ + cost > max_bytes_) return;
  if (map_.emplace(key, std::make_shared<const std::vector<uint32_t>>(std::move(mask))).second)
    bytes_ += cost;
}

}  // namespace nextok::constraint
