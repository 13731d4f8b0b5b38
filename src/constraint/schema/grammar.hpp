// The grammar IR that JSON Schema (and json_object) compile to: a graph of
// value nodes whose leaves are byte DFAs (strings with their quotes,
// numbers, literals, enum values) and whose inner nodes are objects, arrays
// and alternatives. Recursion is a cycle in the graph. The matcher
// (constraint/engine) runs it as a pushdown automaton over bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "constraint/regex/dfa.hpp"

namespace nextok::constraint {

inline constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();
inline constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();

enum class NodeKind : uint8_t {
  kNever,   // no value (the `false` schema, unsatisfiable constraints)
  kLeaf,    // a lexeme read by a DFA
  kObject,  // { properties }
  kArray,   // [ items ]
  kAnyOf,   // any of the options (the matcher tracks them side by side)
};

struct ObjectProperty {
  std::string name;  // decoded key text
  uint32_t node;
};

struct PatternProperty {
  std::string pattern;
  uint32_t node;
};

struct GrammarNode {
  NodeKind kind = NodeKind::kNever;
  // kLeaf: the DFA; strings (json_string DFAs) also count code points.
  uint32_t dfa = 0;
  bool counts_chars = false;
  uint32_t min_chars = 0, max_chars = kUnbounded;
  // kLeaf holding the items of a uniqueItems array: DFA label → value id
  // (< 63), so the array can refuse a value it already holds.
  std::vector<uint8_t> value_ids;
  // kObject. Keys are read by key_dfa, labeled: label i < props.size() is
  // property i, then two labels per pattern property (ECMA classes, Unicode
  // classes), then (when additional is not kNoNode) a last label for any
  // other key.
  std::vector<ObjectProperty> props;
  std::vector<PatternProperty> pattern_props;
  // Keys matched by several patterns: (pattern indexes, sorted) → node.
  std::vector<std::pair<std::vector<uint32_t>, uint32_t>> pattern_combos;
  std::vector<uint32_t> required;  // indexes into props, all < 64
  // dependentRequired: when property first (< 63) is present, so must the
  // properties second (< 63) be.
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> dependent;
  // not: {required}: property sets (indexes < 63) that may not all be present.
  std::vector<std::vector<uint32_t>> forbidden;
  uint32_t additional = kNoNode;  // node for other keys; kNoNode: none allowed
  uint32_t key_dfa = 0;
  uint32_t min_props = 0, max_props = kUnbounded;
  // Keys the object must hold one of (negated closed objects: "some key
  // outside these names and patterns"): mask e has the declared property
  // bits (< 63) that meet it and, when keys that name no declared property
  // meet it too, some_key_bit(e), which the frame's seen set gets once
  // such a key is read that matches none of the key markers
  // some_key_markers[e] lists.
  std::vector<uint64_t> some_key;
  std::vector<std::vector<uint32_t>> some_key_markers;
  // Value-conditioned sets (negated patternProperties: some key the set's
  // marker matches, with a value of the set's schema): mask e is its bit
  // alone, met only by a claim. A key that can claim set e (declared `prop`,
  // or with prop kNoNode an undeclared key the marker matches whose value
  // node is `value`) may have its value read as `claimed` (value and the
  // set's schema), which sets the bit.
  struct KeyClaim {
    uint32_t set, prop, value, claimed;
  };
  std::vector<uint8_t> some_key_valued;  // per set: 1 when value-conditioned
  std::vector<KeyClaim> key_claims;
  // One key may claim several sets at once: its value read as each set's
  // schema (bit e of `sets`: set e), for keys with value node `value`.
  struct KeyClaimCombo {
    uint8_t sets;
    uint32_t value, claimed;
  };
  std::vector<KeyClaimCombo> claim_combos;
  // Patterns that label keys without changing their values (the key
  // automaton's last labels: marker k is marker_label + 2k with ECMA
  // classes, + 2k + 1 with Unicode ones).
  std::vector<std::string> key_markers;
  uint32_t marker_label = kNoNode;
  bool names_restricted = false;  // propertyNames narrowed key_dfa: other keys are not any string
  // kArray.
  std::vector<uint32_t> prefix;
  uint32_t items = kNoNode;  // after the prefix; kNoNode: no more items
  uint32_t min_items = 0, max_items = kUnbounded;
  bool unique = false;  // uniqueItems: items are value_ids leaves, ids tracked in Frame::seen
  // contains with minContains ≥ 1: per position, the item's schema and
  // contains' together (kNoNode: none), then the same for the items after
  // the prefix. The array needs min_contains items read through these;
  // Frame::cur counts them, up to min_contains.
  std::vector<uint32_t> prefix_contains;
  uint32_t items_contains = kNoNode;
  uint32_t min_contains = 0;
  // kAnyOf.
  std::vector<uint32_t> options;
};

// The pattern properties a key matches under both regex flavours, sorted;
// sets `ambiguous` when some pattern matches under one flavour only.
inline std::vector<uint32_t> matched_patterns(std::span<const uint32_t> labels, uint32_t props,
                                              uint32_t patterns, bool* ambiguous = nullptr) {
  std::vector<uint8_t> hits(patterns, 0);
  for (uint32_t l : labels) {
    if (l >= props && l < props + 2 * patterns)
      hits[(l - props) / 2] |= static_cast<uint8_t>(1u << ((l - props) % 2));
  }
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < patterns; ++k) {
    if (hits[k] == 3) out.push_back(k);
    if ((hits[k] == 1 || hits[k] == 2) && ambiguous) *ambiguous = true;
  }
  return out;
}

// How many positions from `from` on can still hold a contains item, up to
// `need`: the positions whose contains node is usable, within max_items.
template <class Usable>
uint32_t contains_supply(const GrammarNode& a, uint32_t from, uint32_t need, Usable usable) {
  uint32_t got = 0;
  const auto prefix = static_cast<uint32_t>(a.prefix.size());
  for (uint32_t j = from; j < prefix && j < a.max_items && got < need; ++j)
    if (j < a.prefix_contains.size() && usable(a.prefix_contains[j])) ++got;
  if (got >= need || a.items == kNoNode || !usable(a.items_contains)) return std::min(got, need);
  const uint32_t first = std::max(from, prefix);
  if (a.max_items == kUnbounded) return need;
  const uint32_t rest = a.max_items > first ? a.max_items - first : 0;
  return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{got} + rest, need));
}

// The value node of a key ending with these key-automaton labels when it
// names no declared property: its pattern's, its patterns' combination's,
// or additionalProperties'; kNoNode when there is none or the regex flavours
// disagree on which patterns match.
inline uint32_t undeclared_key_value(const GrammarNode& obj, std::span<const uint32_t> labels) {
  const auto np = static_cast<uint32_t>(obj.props.size());
  const auto npp = static_cast<uint32_t>(obj.pattern_props.size());
  bool other = false, ambiguous = false;
  for (uint32_t l : labels) other |= l >= np + 2 * npp && l < obj.marker_label;
  const std::vector<uint32_t> patterns = matched_patterns(labels, np, npp, &ambiguous);
  if (ambiguous) return kNoNode;
  if (patterns.size() == 1) return obj.pattern_props[patterns[0]].node;
  if (patterns.size() > 1) {
    for (const auto& [combo, node] : obj.pattern_combos)
      if (combo == patterns) return node;
    return kNoNode;
  }
  return other ? obj.additional : kNoNode;
}

// The seen bit of some_key mask e met by a key that names no declared
// property (the masks' bits count down from 62; declared ones count up).
inline uint64_t some_key_bit(size_t e) {
  return uint64_t{1} << (62 - e);
}
// The seen bits of the sets in `sets` (bit e: set e < 8).
inline uint64_t some_key_bits(uint8_t sets) {
  uint64_t bits = 0;
  for (size_t e = 0; e < 8; ++e)
    if (((sets >> e) & 1U) != 0) bits |= some_key_bit(e);
  return bits;
}

// Whether a key ending with these labels matches one of the key markers
// (under either regex flavour: a key the flavours disagree on is not
// counted as outside them).
inline bool matches_marker(const GrammarNode& obj, std::span<const uint32_t> labels,
                           std::span<const uint32_t> markers) {
  for (uint32_t l : labels) {
    if (obj.marker_label == kNoNode || l < obj.marker_label) continue;
    if (std::find(markers.begin(), markers.end(), (l - obj.marker_label) / 2) != markers.end())
      return true;
  }
  return false;
}

// Whether a key ending with these labels matches key marker k under both
// regex flavours (a claim needs both to agree).
inline bool matches_marker_both(const GrammarNode& obj, std::span<const uint32_t> labels,
                                uint32_t k) {
  if (obj.marker_label == kNoNode) return false;
  const uint32_t a = obj.marker_label + 2 * k;
  return std::find(labels.begin(), labels.end(), a) != labels.end() &&
         std::find(labels.begin(), labels.end(), a + 1) != labels.end();
}

// Whether a key that names no declared property, matches none of `markers`
// and has a value for which `ok` holds can be read.
template <class Ok>
bool undeclared_key_possible(const Dfa& keys, const GrammarNode& obj,
                             std::span<const uint32_t> markers, Ok ok) {
  for (size_t q = 0; q < keys.states(); ++q) {
    const auto labels = keys.labels(static_cast<int32_t>(q));
    if (labels.empty() ||
        std::any_of(labels.begin(), labels.end(), [&](uint32_t l) { return l < obj.props.size(); }))
      continue;
    if (matches_marker(obj, labels, markers)) continue;
    const uint32_t v = undeclared_key_value(obj, labels);
    if (v != kNoNode && ok(v)) return true;
  }
  return false;
}

struct LengthBounds;  // constraint/engine/length_bounds.hpp

struct Grammar {
  std::vector<GrammarNode> nodes;
  std::vector<std::shared_ptr<const Dfa>> dfas;
  // Per DFA: 1 when it lives for the whole process (standard or interned),
  // so its mask entries may be cached vocabulary-wide.
  std::vector<uint8_t> shared_dfa;
  // Per DFA, where the compiler computed them (null elsewhere): the length
  // bounds of a counting leaf's DFA, so the matcher need not again.
  std::vector<std::shared_ptr<const LengthBounds>> lengths;
  uint32_t root = kNoNode;
  uint8_t max_whitespace = 20;  // longest whitespace run between tokens; 0 = compact
};

}  // namespace nextok::constraint
