// The grammar IR run as a pushdown automaton over bytes. A configuration is
// a stack of frames; alternatives (anyOf, type arrays) that share a prefix
// are carried side by side as a set of configurations until a byte tells
// them apart. Every configuration in a set can still reach a complete
// value: a byte that would lead to a dead end is rejected when it is read.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "constraint/engine/code_points.hpp"
#include "constraint/engine/length_bounds.hpp"
#include "constraint/schema/grammar.hpp"

namespace nextok::constraint {

enum class FrameKind : uint8_t { kRoot, kLeaf, kKey, kObject, kArray };

struct Frame {
  uint32_t node = 0;  // grammar node (kKey: the object node)
  int32_t q = 0;      // kLeaf/kKey: DFA state; containers: phase
  uint32_t n = 0;     // kLeaf: code points read; kObject: keys read; kArray: items read;
                      // kKey: the standard string DFA's state on the same bytes
  uint32_t cur = 0;   // kObject: the node of the value being read;
                      // kArray: items read as contains items (up to min_contains)
  uint64_t seen = 0;  // kObject: declared properties read (bit i < 63);
                      // kArray (unique): the value ids read
  uint8_t ws = 0;     // length of the current whitespace run
  uint8_t esc = 0;    // kLeaf: escape-sequence phase (code point counting)
  uint8_t claim = 0;  // kObject: value-conditioned some_key sets the value may claim
  FrameKind kind = FrameKind::kRoot;

  bool operator==(const Frame&) const = default;
};

// Configurations stored back to back: config k is
// frames[ends[k-1] .. ends[k]), its top frame last.
struct ConfigSet {
  std::vector<Frame> frames;
  std::vector<uint32_t> ends;

  size_t size() const noexcept { return ends.size(); }
  bool empty() const noexcept { return ends.empty(); }
  std::span<const Frame> config(size_t k) const noexcept {
    const uint32_t b = k == 0 ? 0 : ends[k - 1];
    return std::span(frames).subspan(b, ends[k] - b);
  }
  void clear() noexcept {
    frames.clear();
    ends.clear();
  }
};

struct ObjectInfo {
  uint64_t declared_ok = 0;  // declared properties < 63 whose value can exist
  bool other = false;        // some other key can be read
  uint64_t required = 0;
  std::vector<std::pair<uint64_t, uint64_t>> dependent;  // (trigger bit, bits it needs)
  std::vector<uint64_t> forbidden;                       // sets that may not all be seen
  std::vector<uint64_t> some_key;                        // GrammarNode::some_key
  bool marked = false;                                   // some mask has key markers
  // Some some_key mask that no key in `seen` meets.
  bool unmet(uint64_t seen) const noexcept {
    return std::any_of(some_key.begin(), some_key.end(),
                       [&](uint64_t m) { return (seen & m) == 0; });
  }
  // Value-conditioned sets (GrammarNode::some_key_valued): per set, the
  // declared properties that can claim it, and whether undeclared keys can.
  std::vector<uint64_t> claim_props;
  std::vector<uint8_t> claim_undeclared;
  // Whether every value-conditioned set `seen` leaves unmet can still be
  // claimed by a key not read yet.
  bool claims_live(uint64_t seen, uint64_t available) const noexcept {
    for (size_t e = 0; e < claim_props.size(); ++e) {
      if ((seen & some_key[e]) != 0 || (claim_props[e] == 0 && claim_undeclared[e] == 0)) continue;
      if (claim_undeclared[e] == 0 && (claim_props[e] & available) == 0) return false;
    }
    return true;
  }
  // The value-conditioned sets one of these declared properties can claim:
  // a required property still to come may meet them itself.
  uint64_t claimable_by(uint64_t props) const noexcept {
    uint64_t bits = 0;
    for (size_t e = 0; e < claim_props.size(); ++e)
      if ((claim_props[e] & props) != 0) bits |= some_key_bit(e);
    return bits;
  }
  // Keys the object must still read after `seen`: the required ones missing
  // and those the open masks take (`claimable`: sets the value being read
  // may meet itself; a missing required property may meet those it claims).
  uint32_t keys_needed(uint64_t seen, uint64_t claimable) const noexcept {
    const uint64_t missing = required_with(seen) & ~seen;
    return static_cast<uint32_t>(std::popcount(missing)) +
           keys_for_unmet(seen | missing | claimable | claimable_by(missing));
  }
  // Per set of masks (bit e: mask e, up to 8 masks), whether one
  // undeclared key meets them all (matches none of their markers).
  std::vector<uint8_t> one_key_meets;
  // Keys still to read for the masks `seen` leaves unmet: one where a
  // single undeclared key meets them all, else one each (an upper bound).
  uint32_t keys_for_unmet(uint64_t seen) const noexcept {
    uint32_t open = 0, n = 0;
    for (size_t e = 0; e < some_key.size(); ++e) {
      if ((seen & some_key[e]) != 0) continue;
      ++n;
      if (e < 8) open |= 1U << e;
    }
    if (n <= 1 || !marked) return std::min<uint32_t>(n, 1);
    return some_key.size() <= 8 && one_key_meets[open] != 0 ? 1 : n;
  }
  // Declared properties that would complete a forbidden set, counting the
  // properties the object must still get (required, and what a trigger
  // read so far or the property itself brings in): reading one of them
  // would leave no way to close the object.
  uint64_t blocked(uint64_t seen) const noexcept {
    if (forbidden.empty()) return 0;
    const uint64_t will = seen | required_with(seen);
    uint64_t b = 0;
    for (uint64_t f : forbidden) {
      const uint64_t missing = f & ~will;
      if ((missing & (missing - 1)) == 0) b |= missing;  // one left (or none)
    }
    for (const auto& [trigger, needs] : dependent) {
      if (seen & trigger) continue;
      const uint64_t with = will | trigger | needs;
      for (uint64_t f : forbidden) {
        if ((f & ~with) == 0) {
          b |= trigger;
          break;
        }
      }
    }
    return b;
  }
  // The properties this object must still hold, given those it has.
  uint64_t required_with(uint64_t seen) const noexcept {
    uint64_t r = required;
    for (const auto& [trigger, needs] : dependent)
      if (seen & trigger) r |= needs;
    return r;
  }
};

// Counts the code points of a JSON string literal as its bytes go by (raw
// UTF-8 at lead bytes, an escape once, a \u surrogate pair once).
inline void count_byte(Frame& f, uint8_t b) noexcept {
  const uint8_t s = kCodePointSteps[f.esc][b];
  f.esc = s & 15;
  f.n += s >> 4;
}

class Machine {
 public:
  // Sets larger than this keep their first configurations only (sound:
  // fewer alternatives, never a wrong one). The schema compiler refuses an
  // anyOf with more options than this, so only nested alternatives that
  // multiply could reach it.
  static constexpr size_t kMaxConfigs = 1024;
  static constexpr size_t kMaxStack = 256;  // frames; deeper nesting is rejected

  explicit Machine(const Grammar& g);

  void start(ConfigSet& out) const;
  // out = every configuration reachable from `in` by byte b (deduplicated).
  // Returns false when there is none.
  bool step(const ConfigSet& in, uint8_t b, ConfigSet& out) const;
  // One configuration (a span of frames) by one byte, appended to out.
  void step_one(std::span<const Frame> cfg, uint8_t b, ConfigSet& out) const;
  // A complete value has been read: EOS may come now.
  bool complete(const ConfigSet& s) const noexcept;
  bool complete_one(std::span<const Frame> cfg) const noexcept;
  // Drops repeated configurations.
  void dedupe(ConfigSet& s) const { finish(s, 0); }
  // Some byte may still follow.
  bool can_continue(const ConfigSet& s) const;

  const Grammar& grammar() const noexcept { return g_; }
  // Object node's key DFA state → which labels can still be reached to a
  // value that can exist (bit i: declared property i < 63; bit 63: any
  // other label).
  uint64_t key_reach(uint32_t obj, int32_t q) const noexcept {
    return reach_[key_reach_id_[obj]][static_cast<size_t>(q)];
  }
  // Whether the key read so far in state q can go on token by token with
  // the key DFA alone deciding (the leaf entries' premise): every non-final
  // state ahead must still reach a key the object can take. True when no
  // state ahead has empty reach and every key q reaches is available, or
  // when every state ahead can still become some other name and the object
  // takes one.
  bool key_reads_freely(uint32_t obj, int32_t q, uint64_t available) const noexcept {
    const uint8_t s = stall_[key_reach_id_[obj]][static_cast<size_t>(q)];
    return (!(s & kStallsEmpty) && (key_reach(obj, q) & ~available) == 0) ||
           (!(s & kStallsOther) && (available & kOtherKey) != 0);
  }
  static constexpr uint64_t kOtherKey = uint64_t{1} << 63;
  // Value-id leaf DFA state → the value ids it can still end as.
  uint64_t value_reach(uint32_t dfa, int32_t q) const noexcept {
    return value_reach_[dfa][static_cast<size_t>(q)];
  }
  // A value-id leaf in state q under this frame can still end as a value
  // the frame's array does not hold yet (true for every other leaf).
  bool value_available(const Frame* below, const GrammarNode& leaf, int32_t q) const noexcept {
    return leaf.value_ids.empty() || !below || below->kind != FrameKind::kArray ||
           (value_reach(leaf.dfa, q) & ~below->seen) != 0;
  }
  // The DFA a leaf or key frame reads.
  const Dfa& leaf_dfa(const Frame& f) const noexcept {
    const GrammarNode& n = g_.nodes[f.node];
    return *g_.dfas[f.kind == FrameKind::kKey ? n.key_dfa : n.dfa];
  }
  // Moves a leaf/key frame to DFA state q2 (not final) on byte b, applying
  // the length and key checks; `below` is the frame under a key (its object).
  bool leaf_advance(const Frame* below, Frame& top, uint8_t b, int32_t q2) const noexcept;
  // The key DFA's final state for a name that is no declared property
  // (-1 when other names are not allowed).
  int32_t other_final(uint32_t key_dfa) const noexcept { return other_final_[key_dfa]; }
  // Length bounds of a counting leaf's DFA (null for other DFAs).
  const LengthBounds* length_bounds(uint32_t dfa) const noexcept { return lengths_[dfa].get(); }
  // Keys still allowed in this object frame, as key_reach bits.
  uint64_t available_keys(const Frame& obj) const noexcept;
  const ObjectInfo& object(uint32_t node) const noexcept { return info_[node]; }
  // Pops a leaf/key frame that has finished (its checks applied) and moves
  // the parent on; false if the parent cannot take the value.
  bool pop(std::vector<Frame>& cfg, size_t base) const;
  // Steps the frames from `base` (one configuration at the end of
  // `frames`) by byte b; may append forks. Returns false when the
  // configuration dies (the caller truncates it).
  bool feed(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const;

 private:
  bool value_start(std::vector<Frame>& frames, size_t base, uint32_t node, uint8_t b,
                   ConfigSet& out) const;
  bool length_ok(const GrammarNode& leaf, const Frame& f) const noexcept;
  bool item_start(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const;
  // The value at `base` started in `ways` copies of the configuration, copy
  // k adjusted by prepare(k, its top frame), which returns the value node;
  // the survivors are committed to `out` (returns false, as value_start
  // does once it forks).
  template <class Prepare>
  bool fork_values(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out, size_t ways,
                   Prepare prepare) const;
  // A value whose key may claim value-conditioned sets: read plainly (while
  // the sets can still be claimed later) and as each claimed value.
  bool claim_start(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const;
  // Those readings, as (value node, seen bits): for an object frame `t`
  // whose key was just read (t.cur its value node, t.claim its sets).
  void claim_ways(const Frame& t, std::vector<std::pair<uint32_t, uint64_t>>& out) const;
  bool push_value(std::vector<Frame>& frames, size_t base, uint32_t node, uint8_t b) const;
  bool container_byte(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const;
  bool leaf_byte(std::vector<Frame>& frames, size_t base, uint8_t b, ConfigSet& out) const;
  bool whitespace(Frame& f, uint8_t b) const noexcept;
  uint64_t within_slots(const ObjectInfo& info, const GrammarNode& node, const Frame& obj,
                        uint64_t keys) const noexcept;
  bool key_available(const Frame& obj) const noexcept;
  void finish(ConfigSet& out, size_t begin) const;

  const Grammar& g_;
  static ObjectInfo object_info(const Grammar& g, const GrammarNode& obj);

  std::vector<uint32_t> key_reach_id_;  // per object node: its reach_/stall_ table
  std::vector<std::vector<uint64_t>> reach_;
  // Per key DFA state: some non-final state ahead has empty reach
  // (kStallsEmpty), or lacks the other-name bit (kStallsOther).
  static constexpr uint8_t kStallsEmpty = 1, kStallsOther = 2;
  std::vector<std::vector<uint8_t>> stall_;
  std::vector<std::vector<uint64_t>> value_reach_;            // per DFA of a value-id leaf
  std::vector<int32_t> other_final_;                          // per key DFA
  std::vector<std::shared_ptr<const LengthBounds>> lengths_;  // per DFA read by a counting leaf
  std::vector<ObjectInfo> info_;                              // per object node
};

bool is_json_whitespace(uint8_t b) noexcept;

}  // namespace nextok::constraint
