// Names of a chart's Earley sets that hold across requests, for the
// grammar's mask memo and for the walker's table.
//
// What a set does next depends on its items and, through completions, on
// its items' origin sets. But a completion of A at origin o reads only o's
// items that wait for A, and where such an item began in o itself, the
// items of o that wait for its own left-hand side: the projection of o on
// A. So an item is named by its position and the name of its origin's
// projection on the item's left-hand side, not by the origin set's whole
// content. Sets that differ only in what they would do for other
// nonterminals (a keyword begun one byte later, a lexeme that may end at
// every byte) then get one name, which is what lets a walk through
// ambiguous lexemes repeat itself. Exact: a projection's content determines
// every completion through it, and names are interned by content.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "constraint/cfg/earley.hpp"

namespace nextok::constraint::cfg {

class MaskMemo;

// Origin codes in a name's items: a lasting projection name (below 2^30),
// or "this set".
inline constexpr uint64_t kSelfOrigin = uint64_t{3} << 30;
// Names from kLocalNames up are a matcher's own, made once the memo's
// budget is spent: they name sets as well but have no memoised mask.
inline constexpr int32_t kLocalNames = int32_t{1} << 29;

// The item list (pos << 32 | origin code) of a projection of a named set
// on nonterminal `a`: the items waiting for `a` and, for those that began
// in the set itself, those waiting for their left-hand sides, closed.
// `items` is sorted; the result is sorted and deduplicated. A set is read
// a bounded number of times however many nonterminals the closure reaches.
class Projector {
 public:
  void project(const EarleyTables& t, std::span<const uint64_t> items, uint32_t a,
               std::vector<uint64_t>& out);

 private:
  static constexpr size_t kScans = 3;  // nonterminals found by a scan each
  // Per nonterminal, stamped with gen_: the first item waiting for it, and
  // whether the closure has reached it. Per item: the next in its list.
  std::vector<uint32_t> head_stamp_, reached_stamp_;
  std::vector<int32_t> head_, next_;
  std::vector<uint32_t> todo_;
  uint32_t gen_ = 0;
};

class ChartNames {
 public:
  static constexpr int32_t kNoName = -1;

  // Names the chart's sets from sets() on (after start or advance).
  void name_sets(const EarleyTables& t, const Chart& c, MaskMemo& memo);
  void truncate(size_t n);
  void clear() { truncate(0); }
  size_t sets() const noexcept { return sets_.size(); }
  // The lasting name of set k.
  int32_t state(size_t k) const noexcept { return sets_[k].name; }
  // Set k's items, named (sorted; completed items left out).
  const std::vector<uint64_t>& items(size_t k) const noexcept { return sets_[k].items; }
  // The lasting name of set k's projection on nonterminal a.
  int32_t projection(const EarleyTables& t, size_t k, uint32_t a);
  // The key a name was made from: its items, then one tag byte.
  std::string_view key(int32_t name) const;
  // Tells this object's own names (kLocalNames and up) from another's: a
  // copy numbers its later names apart, so it gets a serial of its own.
  uint64_t serial() const noexcept { return serial_.value; }

 private:
  struct Set {
    int32_t name = kNoName;
    std::vector<uint64_t> items;                      // named items, sorted
    std::vector<std::pair<uint32_t, int32_t>> projs;  // nonterminal -> lasting name
  };
  int32_t name_set(const EarleyTables& t, const Chart& c, size_t k);
  int32_t intern(const std::string& key, bool local);

  struct Serial {
    Serial();
    Serial(const Serial&) : Serial() {}
    Serial& operator=(const Serial&) { return *this = Serial(); }
    Serial& operator=(Serial&&) = default;
    uint64_t value;
  };
  Serial serial_;
  MaskMemo* memo_ = nullptr;
  std::vector<Set> sets_;
  std::unordered_map<std::string, int32_t> local_ids_;
  std::deque<std::string> local_keys_;  // stable: key() hands out views
  std::vector<uint64_t> scratch_;
  Projector projector_;
  std::string key_;
};

}  // namespace nextok::constraint::cfg
