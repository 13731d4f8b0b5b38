// An Earley recogniser over bytes for the grammar IR. Any context-free
// grammar works, left recursion included. A Chart holds one item set per
// byte read; sets are only appended and truncated, so a token-trie walk
// pushes a set per depth and pops back, and rollback is a truncation.
// Every symbol is productive (cfg::prune), so a non-empty set means the
// bytes so far extend to a sentence: the matcher needs no lookahead.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "constraint/cfg/cfg.hpp"

namespace nextok::constraint::cfg {

struct Item {
  uint32_t pos;     // into EarleyTables::syms: the symbol after the dot
  uint32_t origin;  // the set where the production started
};

// The grammar flattened for the recogniser. Compiled once per grammar.
struct EarleyTables {
  static constexpr Symbol kEnd = INT32_MIN;  // after each production's body

  explicit EarleyTables(const Cfg& g);  // g pruned
  std::vector<Symbol> syms;
  std::vector<uint32_t> lhs;         // per position (meaningful at kEnd)
  std::vector<uint32_t> prod_begin;  // per nonterminal: into prods (+1 sentinel)
  std::vector<uint32_t> prods;       // production start positions
  std::vector<uint8_t> nullable;     // per nonterminal
  std::vector<ByteSet> terminals;
  // Bytes every terminal treats alike share a class: an Earley step on one
  // is the step on all of them, so the walker's table is states × classes.
  std::array<uint8_t, 256> byte_class{};
  uint32_t classes = 1;
  std::vector<ByteSet> class_bytes;  // per class: its bytes
  std::vector<uint8_t> class_ascii;  // per class: how many of them are ASCII
  uint32_t start_pos = 0;            // S' -> . root
  uint32_t accept_pos = 0;           // S' -> root .
};

struct Chart {
  std::vector<Item> items;
  std::vector<uint32_t> begin = {0};  // set k is items[begin[k], begin[k+1])
  std::vector<uint8_t> accepting;     // per set: S' -> root . with origin 0
  size_t sets() const noexcept { return begin.size() - 1; }
  std::span<const Item> set(size_t k) const noexcept {
    return std::span(items).subspan(begin[k], begin[k + 1] - begin[k]);
  }
  void truncate(size_t n) {
    begin.resize(n + 1);
    accepting.resize(n);
    items.resize(begin.back());
  }
};

// The key that names an Earley set by content: its items as (position,
// origin code) pairs, sorted and deduplicated in place, and whether it
// accepts. Shared by the walker's names and the mask memo's.
void set_key(std::vector<uint64_t>& items, bool accepting, std::string& key);

class Earley {
 public:
  // `max_items` bounds one set: past it, step() throws
  // Error{kInvalidArgument, "grammar"} instead of growing without end.
  Earley(const EarleyTables& t, size_t max_items);
  void start(Chart& c);
  // Reads byte b after the last set: appends a set and returns true, or
  // returns false and leaves the chart as it was.
  bool step(Chart& c, uint8_t b);
  // The bytes the last set can read next.
  ByteSet next_bytes(const Chart& c) const;
  const EarleyTables& tables() const noexcept { return t_; }

 private:
  void add(Chart& c, uint32_t pos, uint32_t origin);
  void close(Chart& c, size_t k);

  const EarleyTables& t_;
  size_t max_items_;
  // Open-addressing dedupe of the set being built; a generation number
  // clears it in O(1).
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> gen_;
  uint32_t cur_gen_ = 0;
};

}  // namespace nextok::constraint::cfg
