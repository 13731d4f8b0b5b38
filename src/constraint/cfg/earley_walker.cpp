#include "constraint/cfg/earley_walker.hpp"

#include <algorithm>
#include <cstring>

namespace nextok::constraint::cfg {

namespace {
bool inside(const TokenTrie::Bytes& a, const ByteSet& b) {
  return ((a[0] & ~b.w[0]) | (a[1] & ~b.w[1]) | (a[2] & ~b.w[2]) | (a[3] & ~b.w[3])) == 0;
}
}  // namespace

// The set at `depth` (chart index base_ + depth) by content: its items,
// each origin replaced by the name of the set it points to (or "this
// set"): inside the walk the walk's own names, before it the chart's
// lasting names. What a set does next depends only on its items and,
// through completions, on the content of their origin sets, so equal names
// behave alike wherever their sets lie: a lexeme that began inside the walk
// keeps one name per state however deep it runs, and the table holds from
// one mask to the next. An origin set without a lasting name is coded by
// its position, and the table is dropped after that mask.
int32_t EarleyWalker::name_set(size_t depth) {
  const Chart& c = *chart_;
  const size_t ci = base_ + depth;
  items_.clear();
  for (const Item& it : c.set(ci)) {
    // A completed item has done its work (close() ran its completions) and
    // no later step reads it: leaving it out lets repeated sets meet.
    if (syms_[it.pos] == EarleyTables::kEnd) continue;
    uint64_t origin;
    if (it.origin < base_) {
      const int32_t lasting = lasting_[it.origin];
      if (lasting >= 0) {
        origin = static_cast<uint64_t>(lasting);
      } else {
        origin = kAbsolute | it.origin;
        positional_ = true;
      }
    } else {
      const size_t rel = ci - it.origin;
      if (rel == 0) {
        origin = kSelf;
      } else {
        const int32_t ref = ids_[depth - rel];
        if (ref < 0) return kNoName;  // points to a nameless set
        origin = kRef | static_cast<uint64_t>(ref);
      }
    }
    items_.push_back((uint64_t{it.pos} << 32) | origin);
  }
  std::sort(items_.begin(), items_.end());
  items_.erase(std::unique(items_.begin(), items_.end()), items_.end());
  key_.assign(reinterpret_cast<const char*>(items_.data()), items_.size() * sizeof(uint64_t));
  key_.push_back(static_cast<char>(c.accepting[ci]));
  if (auto it = names_.find(key_); it != names_.end()) return it->second;
  if (names_.size() >= max_states_ || table_.size() + classes_ > kMaxEntries) return kNoName;
  const auto id = static_cast<int32_t>(names_.size());
  names_.emplace(key_, id);
  table_.resize(table_.size() + classes_, kUnknown);
  next_.push_back({});
  loops_.push_back({});
  return id;
}

// Makes the chart hold the current path's sets down to `depth`.
bool EarleyWalker::materialize(Earley& earley, Chart& chart, size_t depth) {
  for (size_t d = chart.sets() - base_; d <= depth; ++d) {
    if (!earley.step(chart, path_[d])) return false;
  }
  return true;
}

void EarleyWalker::allow(const TokenTrie& trie, Earley& earley, Chart& chart,
                         std::span<const int32_t> lasting, std::span<uint32_t> mask) {
  const auto below = trie.bytes_below();
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  chart_ = &chart;
  syms_ = earley.tables().syms.data();
  const auto& byte_class = earley.tables().byte_class;
  base_ = chart.sets() - 1;
  const size_t depth_max = trie.max_depth() + 1;
  ids_.assign(depth_max, kNoName);
  path_.assign(depth_max, 0);
  depth_next_.assign(depth_max, {});
  lasting_ = lasting;
  // Past half the room, start afresh: a walk that ran out of names midway
  // would go on without the table.
  if (positional_ || names_.size() * 2 >= max_states_ || table_.size() * 2 >= kMaxEntries ||
      classes_ != earley.tables().classes) {
    classes_ = earley.tables().classes;
    names_.clear();
    table_.clear();
    next_.clear();
    loops_.clear();
    positional_ = false;
  }
  ids_[0] = name_set(0);
  const ByteSet root_next = earley.next_bytes(chart);
  if (ids_[0] >= 0) next_[static_cast<size_t>(ids_[0])] = root_next;
  depth_next_[0] = root_next;
  try {
    for (size_t i = 1; i < nodes.size();) {
      const auto& n = nodes[i];
      const size_t d = n.depth;
      // Deeper sets in the chart belong to a subtree already left.
      if (chart.sets() > base_ + d) chart.truncate(base_ + d);
      const int32_t parent = ids_[d - 1];
      if (!depth_next_[d - 1].has(n.byte)) {
        i = n.end;
        continue;
      }
      const size_t slot = static_cast<size_t>(parent) * classes_ + byte_class[n.byte];
      int32_t child = parent >= 0 ? table_[slot] : kUnknown;
      path_[d] = n.byte;
      if (child == kUnknown || child == kNoName) {
        if (!materialize(earley, chart, d - 1) || !earley.step(chart, n.byte)) {
          child = kDead;
        } else {
          child = name_set(d);
          const ByteSet nb = earley.next_bytes(chart);
          if (child >= 0) next_[static_cast<size_t>(child)] = nb;
          depth_next_[d] = nb;
        }
        if (parent >= 0 && child != kNoName) {
          table_[slot] = child;
          if (child == parent) {
            // Every byte of the class reads back into this state.
            const ByteSet& cls = earley.tables().class_bytes[byte_class[n.byte]];
            auto& loop = loops_[static_cast<size_t>(parent)];
            for (size_t w = 0; w < 4; ++w) loop.w[w] |= cls.w[w];
          }
        }
      } else if (child >= 0) {
        depth_next_[d] = next_[static_cast<size_t>(child)];
      }
      if (child == kDead) {
        i = n.end;
        continue;
      }
      if (child >= 0 && inside(below[i], loops_[static_cast<size_t>(child)])) {
        // Every byte below reads back into this state: all of it fits.
        for (const uint32_t id : trie.subtree_tokens(i)) mask[id >> 5] |= 1u << (id & 31);
        i = n.end;
        continue;
      }
      ids_[d] = child;
      for (uint32_t k = 0; k < n.token_count; ++k) {
        const uint32_t id = tokens[n.first_token + k];
        mask[id >> 5] |= 1u << (id & 31);
      }
      ++i;
    }
  } catch (...) {
    chart.truncate(base_ + 1);
    throw;
  }
  chart.truncate(base_ + 1);
}

}  // namespace nextok::constraint::cfg
