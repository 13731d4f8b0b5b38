// The token-trie walk for the Earley recogniser. A plain walk runs one
// Earley step per trie node, which is slow where nearly every token fits
// (free text, string contents) and where lexemes are ambiguous. So the walk
// steps names rather than sets: a state is an Earley set's items with each
// origin replaced by the name of its projection (chart_names.hpp), and the
// Earley step is run on those names, reading an origin's projection where
// a completion needs it. Equal sets are then equal numbers wherever they
// occur, a transition table (state x byte class) replaces the step
// wherever the walk repeats itself, and the chart is never touched. Exact:
// a name holds everything a step reads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "constraint/cfg/chart_names.hpp"
#include "constraint/cfg/earley.hpp"
#include "constraint/cfg/flat_map.hpp"
#include "constraint/trie/free_text_masks.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint::cfg {

class EarleyWalker {
 public:
  // `max_states`: named states kept (from mask to mask); past it, or past
  // kMaxEntries table entries, the walk goes on without the table (slower,
  // same result) and the next mask starts a new one.
  explicit EarleyWalker(size_t max_states = 8192) : max_states_(max_states) {}

  // ORs into mask every token whose bytes the chart's last set can read
  // (EOS excluded). A state known to read every byte below a trie node
  // back into itself (free text) allows the node's whole subtree, which is
  // then set without walking it. `names` names the chart's sets;
  // `max_items` bounds a set as Earley's does.
  void allow(const TokenTrie& trie, const EarleyTables& t, size_t max_items, size_t chart_sets,
             ChartNames& names, std::span<uint32_t> mask);

 private:
  static constexpr int32_t kUnknown = -2, kDead = -1, kNoName = -3;
  // Origin codes: a walk projection number (the chart's lasting names are
  // translated into these), this set.
  static constexpr uint64_t kRef = uint64_t{2} << 30, kSelf = kSelfOrigin;

  struct State {
    size_t begin = 0;  // its items in state_arena_, sorted: pos << 32 | origin code
    uint32_t size = 0;
    ByteSet next;                                      // the bytes it can read
    int8_t closed = -1;                                // utf8_closed, -1 not yet known
    std::vector<std::pair<uint32_t, uint64_t>> projs;  // nonterminal -> code
  };

  // The state of items_ (deduplicated; a new state's are sorted), looked
  // up by an order-free hash: in_seen, the items are a step's, all in
  // `seen` and unsorted; else sorted. kNoName when the room is spent.
  int32_t intern(bool in_seen);
  // State s's items, or for kNoName the nameless set kept at `depth`.
  std::span<const uint64_t> state_items(int32_t s) const {
    const State& st = states_[static_cast<size_t>(s)];
    return {state_arena_.data() + st.begin, st.size};
  }
  std::span<const uint64_t> items_of(int32_t s, size_t depth) const {
    return s >= 0 ? state_items(s) : std::span<const uint64_t>(depth_items_[depth]);
  }
  // A walk projection's items (code: kRef | its number).
  std::span<const uint64_t> proj_items(uint64_t code) const {
    const auto [begin, size] = proj_spans_[static_cast<size_t>(code - kRef)];
    return {proj_arena_.data() + begin, size};
  }
  // The code of the projection of `items` on nonterminal a.
  uint64_t project(std::span<const uint64_t> items, uint32_t a);
  // The code of the projection on a of state s at `depth` (cached per
  // named state).
  uint64_t state_projection(int32_t s, size_t depth, uint32_t a);
  // The code of the projection named `code` projected again on a.
  uint64_t sub_projection(uint64_t code, uint32_t a);
  uint64_t intern_projection(std::span<const uint64_t> items);
  uint64_t translate(uint64_t lasting);
  // Where a lasting name's translation is kept: a matcher's own or the grammar's.
  std::unordered_map<uint64_t, uint64_t>& codes_for(uint64_t lasting) {
    return static_cast<int32_t>(lasting) >= kLocalNames ? local_codes_ : lasting_codes_;
  }
  // The Earley step on names from state s at `depth` on byte b: the new
  // state, kDead, or kNoName (no room; its items are kept at depth + 1).
  int32_t step(int32_t s, uint8_t b, size_t depth);
  void add(uint32_t pos, uint64_t code);
  // Adds what predicting nonterminal a adds, closed: its productions, those
  // of the nonterminals they wait for, and (Aycock and Horspool) the steps
  // over nullable ones, all beginning in this set; once per step.
  void predict(uint32_t a);
  // The closure's positions (completed ones left out) and the nonterminals
  // it predicts, kept per nonterminal up to kMaxClosure positions.
  struct Closure {
    uint32_t begin = 0, size = 0, nts_begin = 0, nts_size = 0;
    int8_t kept = -1;  // -1 not made yet, 0 too large to keep, 1 kept
  };
  static constexpr size_t kMaxClosure = 4096;
  void make_closure(uint32_t a, std::vector<uint32_t>& pos, std::vector<uint32_t>& nts);
  // Marks key as in the set being built; true if it was already.
  bool seen(uint64_t key);
  bool in_set(uint64_t key) const;  // whether seen() marked it in this step
  // The state after byte b from state `from` at `depth`, from the table or
  // stepped and noted there.
  int32_t step_from(int32_t from, uint8_t b, size_t depth);
  // Whether every character of two bytes or more from state `from` is
  // live all the way and ends in `home`.
  bool utf8_leads(int32_t from, int32_t home, size_t depth);
  bool utf8_closed(int32_t s, size_t depth);
  bool utf8_rest(int32_t x, int reader, int32_t home, size_t depth);
  bool fits_below(int32_t s, const TokenTrie::Bytes& below, uint8_t utf8, size_t subtree_nodes,
                  size_t depth);
  // Loop items: an item of `A ::= A . X` whose origin's projection gives
  // it back when A completes comes back after any byte X reads alone (a
  // terminal, or a nonterminal's one-terminal alternatives), whatever else
  // the state holds: a name's or a run's inside, where the rest of the
  // state changes byte by byte (keyword prefixes begun inside a name). So a
  // subtree whose bytes below all loop on one such item fits whole.
  // loop_of_pos_: per position, the bytes X reads alone there, or -1.
  void index_loop_positions();
  bool loop_item_fits(int32_t s, const TokenTrie::Bytes& below);
  std::vector<int32_t> loop_of_pos_;
  std::vector<ByteSet> loop_bytes_;
  // Per state: its loop items' byte sets (up to kCores; count -1 not yet known).
  static constexpr size_t kCores = 2;
  struct Cores {
    int8_t count = -1;
    std::array<ByteSet, kCores> bytes;
  };
  std::vector<Cores> cores_;
  static constexpr size_t kUtf8CheckNodes = 256;
  // Steps every byte class from s (the table's row complete, and with it
  // s's loop set); kNoName when the room is spent.
  int32_t full_row(int32_t s);
  // The free-text state the walk's first bytes lead to, or -1: the child
  // of the root that FreeText::kMinAscii ASCII bytes or more lead to and that
  // as many loop on (the root itself inside a string). Its kept mask (the
  // tokens that stay in it) is OR-ed into mask, and free_ describes it.
  int32_t free_text_start(const TokenTrie& trie, std::span<uint32_t> mask);
  FreeText free_;
  TokenTrie::Bytes free_loop_or_dead_{};  // bytes that loop or die there
  std::vector<int8_t> kept_;              // per depth: FreeText::next of the path
  template <bool kFree>
  void walk(const TokenTrie& trie, std::span<uint32_t> mask, int32_t star);
  void clear_tables();

  size_t max_states_;
  static constexpr size_t kMaxEntries = size_t{1} << 19;  // table: 2 MiB a walker
  const EarleyTables* t_ = nullptr;
  ChartNames* names_ = nullptr;
  uint64_t names_serial_ = 0;  // whose own names local_codes_ translates
  size_t max_items_ = 0;
  size_t base_ = 0;  // the chart set the walk starts from (for error messages)
  std::vector<State> states_;
  // Numbers by content: the first with a hash, then a chain per number.
  FlatMap<int32_t> state_by_hash_;
  std::vector<int32_t> state_next_;
  std::vector<int32_t> table_;  // states x byte classes
  // Per state, read at every trie node (so apart from State): bytes known
  // to lead back to it, and whether there are any.
  std::vector<ByteSet> loops_;
  std::vector<uint8_t> looping_;
  uint32_t classes_ = 0;
  // Walk projections: content by number, number by key.
  // Items of every state and walk projection, one arena each (no allocation
  // per state; clearing is one free).
  std::vector<uint64_t> state_arena_, proj_arena_;
  std::vector<std::pair<size_t, size_t>> proj_spans_;  // per projection: begin, size
  FlatMap<int32_t> proj_by_hash_;
  std::vector<int32_t> proj_next_;
  FlatMap<uint64_t> sub_projs_;  // code << 32 | a -> code
  // Lasting projection names (the grammar's, a matcher's own) -> codes.
  std::unordered_map<uint64_t, uint64_t> lasting_codes_, local_codes_;
  // The step's set under construction, deduplicated by a stamped hash.
  std::vector<uint64_t> items_;
  std::vector<uint64_t> seen_keys_;
  std::vector<uint32_t> seen_gen_;
  uint32_t gen_ = 0;
  std::vector<uint64_t> scratch_;
  Projector projector_;
  std::vector<Closure> closures_;  // per nonterminal of t_
  std::vector<uint32_t> closure_pos_, closure_nts_, spill_pos_, spill_nts_;
  std::vector<uint32_t> pos_stamp_, nt_stamp_, predicted_;
  uint32_t closure_gen_ = 0, predict_gen_ = 0;
  std::vector<uint32_t> todo_;
  // Per depth of the current path: its state, and its items where nameless.
  std::vector<int32_t> ids_;
  std::vector<std::vector<uint64_t>> depth_items_;
};

}  // namespace nextok::constraint::cfg
