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
  set_key(items_, c.accepting[ci] != 0, key_);
  if (auto it = names_.find(key_); it != names_.end()) return it->second;
  if (names_.size() >= max_states_ || table_.size() + classes_ > kMaxEntries) return kNoName;
  const auto id = static_cast<int32_t>(names_.size());
  names_.emplace(key_, id);
  table_.resize(table_.size() + classes_, kUnknown);
  next_.push_back({});
  loops_.push_back({});
  closed_.push_back(-1);
  return id;
}

// Makes the chart hold the current path's sets down to `depth`.
bool EarleyWalker::materialize(Earley& earley, Chart& chart, size_t depth) {
  for (size_t d = chart.sets() - base_; d <= depth; ++d) {
    if (!earley.step(chart, path_[d])) return false;
  }
  return true;
}

// Whether every token below trie node i (state s, the set at `depth`)
// fits: every byte below reads back into s, or the subtree is well-formed
// UTF-8 from a character boundary, its ASCII bytes read back into s and s
// reads every longer character back into itself.
bool EarleyWalker::fits_below(Earley& earley, size_t depth, int32_t s,
                              const TokenTrie::Bytes& below, uint8_t utf8, size_t subtree_nodes) {
  const ByteSet& loop = loops_[static_cast<size_t>(s)];
  if (inside(below, loop)) return true;
  const TokenTrie::Bytes ascii = {below[0], below[1], 0, 0};
  if ((utf8 & 1) == 0 || !inside(ascii, loop)) return false;
  const int8_t verdict = closed_[static_cast<size_t>(s)];
  if (verdict >= 0) return verdict == 1;
  // The check costs a few dozen Earley steps once per state: worth it only
  // where it may save walking a large subtree.
  if (subtree_nodes < kUtf8CheckNodes) return false;
  return materialize(earley, *chart_, depth) && utf8_closed(earley, depth, s);
}

void EarleyWalker::record(const EarleyTables& t, int32_t from, uint8_t b, int32_t child) {
  const uint8_t cls = t.byte_class[b];
  table_[static_cast<size_t>(from) * classes_ + cls] = child;
  if (child == from) {
    // Every byte of the class reads back into this state.
    auto& loop = loops_[static_cast<size_t>(from)];
    for (size_t w = 0; w < 4; ++w) loop.w[w] |= t.class_bytes[cls].w[w];
  }
}

int32_t EarleyWalker::step_from(Earley& earley, size_t depth, int32_t from, uint8_t b) {
  const auto& t = earley.tables();
  const size_t slot = static_cast<size_t>(from) * classes_ + t.byte_class[b];
  if (table_[slot] == kDead) return kDead;
  // Always stepped, even when the table knows the answer: the next byte of
  // the exploration needs this set in the chart.
  Chart& chart = *chart_;
  chart.truncate(base_ + depth + 1);
  if (!next_[static_cast<size_t>(from)].has(b) || !earley.step(chart, b)) {
    table_[slot] = kDead;
    return kDead;
  }
  const int32_t child = name_set(depth + 1);
  if (child == kNoName) return kNoName;
  next_[static_cast<size_t>(child)] = earley.next_bytes(chart);
  record(earley.tables(), from, b, child);
  return child;
}

// Reads on from state x (the set at `depth`) with the UTF-8 reader in state
// `reader`, one byte of each class the reader allows; true when every way
// is live and each character ends back in `home`.
bool EarleyWalker::utf8_rest(Earley& earley, size_t depth, int32_t x, int reader, int32_t home) {
  if (reader == 0) return x == home;
  if (depth + 1 >= ids_.size()) return false;
  ids_[depth] = x;
  std::vector<uint8_t> seen(classes_, 0);
  for (unsigned b = 0x80; b <= 0xBF; ++b) {
    const int next = constraint::Utf8Reader::next(reader, static_cast<uint8_t>(b));
    const uint8_t cls = earley.tables().byte_class[b];
    if (next < 0 || seen[cls]) continue;
    seen[cls] = 1;
    const int32_t y = step_from(earley, depth, x, static_cast<uint8_t>(b));
    if (y < 0 || !utf8_rest(earley, depth + 1, y, next, home)) return false;
  }
  return true;
}

bool EarleyWalker::utf8_closed(Earley& earley, size_t depth, int32_t s) {
  const int8_t verdict = closed_[static_cast<size_t>(s)];  // a copy: name_set grows closed_
  if (verdict >= 0) return verdict == 1;
  bool ok = true;
  // Lead bytes alike when their class and their reader state agree.
  std::vector<uint8_t> seen(static_cast<size_t>(classes_) * constraint::Utf8Reader::kStates, 0);
  for (unsigned b = 0xC2; b <= 0xF4 && ok; ++b) {
    const int reader = constraint::Utf8Reader::next(0, static_cast<uint8_t>(b));
    const size_t key = earley.tables().byte_class[b] * size_t{constraint::Utf8Reader::kStates} +
                       static_cast<size_t>(reader);
    if (seen[key]) continue;
    seen[key] = 1;
    ids_[depth] = s;
    const int32_t t = step_from(earley, depth, s, static_cast<uint8_t>(b));
    ok = t >= 0 && utf8_rest(earley, depth + 1, t, reader, s);
  }
  ids_[depth] = s;
  chart_->truncate(base_ + depth + 1);
  closed_[static_cast<size_t>(s)] = ok ? 1 : 0;  // name_set may have grown closed_
  return ok;
}

void EarleyWalker::allow(const TokenTrie& trie, Earley& earley, Chart& chart,
                         std::span<const int32_t> lasting, std::span<uint32_t> mask) {
  const auto below = trie.bytes_below();
  const auto utf8 = trie.utf8_below();
  const auto nodes = trie.nodes();
  const auto tokens = trie.tokens();
  chart_ = &chart;
  syms_ = earley.tables().syms.data();
  const auto& byte_class = earley.tables().byte_class;
  base_ = chart.sets() - 1;
  // A UTF-8 exploration (utf8_closed) reads up to four bytes past a node.
  const size_t depth_max = trie.max_depth() + 5;
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
    closed_.clear();
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
          record(earley.tables(), parent, n.byte, child);
        }
      } else if (child >= 0) {
        depth_next_[d] = next_[static_cast<size_t>(child)];
      }
      if (child == kDead) {
        i = n.end;
        continue;
      }
      ids_[d] = child;
      if (child >= 0 && fits_below(earley, d, child, below[i], utf8[i], n.end - i)) {
        for (const uint32_t id : trie.subtree_tokens(i)) mask[id >> 5] |= 1u << (id & 31);
        i = n.end;
        continue;
      }
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
