// The token-trie walk for the Earley recogniser. A plain walk runs one
// Earley step per trie node, which is slow where nearly every token fits
// (free text, string contents). But the set reached after a byte depends
// only on the set before it and on the sets its items' origins point to;
// naming each set by that content (origins inside the walk by the names of
// the sets they point to, earlier ones absolute) makes equal states equal
// numbers, so a walk through free text turns into table lookups, like a
// DFA's, one entry per byte class. Sets are materialized in the chart
// only when a transition is not in the table yet. Exact: the table maps a
// state to the state the Earley step would build.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "constraint/cfg/earley.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint::cfg {

class EarleyWalker {
 public:
  // `max_states`: named states kept (from mask to mask); past it, or past
  // kMaxEntries table entries, the walk goes on without the table (slower,
  // same result) and the next mask starts a new one.
  explicit EarleyWalker(size_t max_states = 4096) : max_states_(max_states) {}

  // ORs into mask every token whose bytes the chart's last set can read
  // (EOS excluded). The chart is left as it was. A state known to read
  // every byte below a trie node back into itself (free text) allows the
  // node's whole subtree, which is then set without walking it.
  // `lasting`: per chart set, its MaskMemo name (kNoName: none).
  void allow(const TokenTrie& trie, Earley& earley, Chart& chart, std::span<const int32_t> lasting,
             std::span<uint32_t> mask);

 private:
  static constexpr int32_t kUnknown = -2, kDead = -1, kNoName = -3;
  // Origin codes in a set's name: a lasting name (below 2^30), a position,
  // a walk name, this set.
  static constexpr uint64_t kAbsolute = uint64_t{1} << 30, kRef = uint64_t{2} << 30,
                            kSelf = uint64_t{3} << 30;

  int32_t name_set(size_t depth);
  bool materialize(Earley& earley, Chart& chart, size_t depth);
  // The state after byte b from state `from`, whose set is the chart's at
  // `depth`, stepped into the chart at depth + 1 and noted in the table;
  // kDead or kNoName otherwise.
  int32_t step_from(Earley& earley, size_t depth, int32_t from, uint8_t b);
  // Notes in the table that byte b leads from `from` to `child` (a state),
  // and in loops_ when it leads back.
  void record(const EarleyTables& t, int32_t from, uint8_t b, int32_t child);
  // Whether state s, the set at `depth`, reads every UTF-8 character of two
  // bytes or more back into itself, live after each byte.
  bool utf8_closed(Earley& earley, size_t depth, int32_t s);
  bool utf8_rest(Earley& earley, size_t depth, int32_t x, int reader, int32_t home);
  bool fits_below(Earley& earley, size_t depth, int32_t s, const TokenTrie::Bytes& below,
                  uint8_t utf8, size_t subtree_nodes);
  static constexpr size_t kUtf8CheckNodes = 256;

  size_t max_states_;
  static constexpr size_t kMaxEntries = size_t{1} << 18;  // table: 1 MiB a matcher
  std::span<const int32_t> lasting_;
  bool positional_ = false;  // a name holds a position: drop the table
  size_t base_ = 0;          // chart index of depth 0
  Chart* chart_ = nullptr;
  const Symbol* syms_ = nullptr;
  std::vector<int32_t> ids_;    // per depth on the current path
  std::vector<uint8_t> path_;   // byte into each depth
  std::vector<int32_t> table_;  // states × byte classes
  uint32_t classes_ = 1;
  std::vector<ByteSet> next_;   // per state: the bytes it can read
  std::vector<ByteSet> loops_;  // per state: bytes known to lead back to it
  std::vector<int8_t> closed_;  // per state: utf8_closed, -1 not yet known
  std::unordered_map<std::string, int32_t> names_;
  std::string key_;
  std::vector<uint64_t> items_;
  std::vector<ByteSet> depth_next_;
};

}  // namespace nextok::constraint::cfg
