// A byte-level DFA compiled from a regular expression (the ECMA-262 subset
// JSON Schema `pattern` uses, without backreferences or lookaround).
// States that cannot reach acceptance are removed, so a rejected byte means
// no continuation can ever match: what a token-trie walk needs to prune.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nextok::constraint {

struct RegexOptions {
  // JSON Schema `pattern` matches anywhere in the string unless anchored
  // with ^ and $; full_match = true matches the whole input instead. ^ and $
  // may stand anywhere and assert the input's start and end (ECMA-262
  // without the m flag); in json_string mode, the decoded content's.
  bool full_match = true;
  size_t max_states = 10000;  // DFA states; past it, compile fails clearly
  // The automaton reads a JSON string literal, quotes included, whose
  // decoded content the pattern matches: '"', '\\' and controls must be
  // escaped, everything else is raw UTF-8 (see docs/constraint-engine.md).
  bool json_string = false;
  // \d, \w and \s take their Unicode meanings (supersets of ECMA's, which
  // are ASCII): for patternProperties, where missing a match that another
  // validator sees would skip a schema.
  bool unicode_classes = false;
  // With json_string: only the spellings a set needs (no \uXXXX for
  // printable characters), so that each key has one spelling per name.
  bool canonical_escapes = false;
  // Python `re` syntax and its i and s flags (regex::Syntax), for Lark
  // grammars' regex terminals.
  bool python = false;
  bool ignore_case = false;
  bool dot_all = false;
};

// One alternative of a labeled union: a pattern, or literal text.
struct RegexAlternative {
  std::string_view text;
  bool literal = false;
  bool unicode_classes = false;  // as RegexOptions::unicode_classes, for this one
};

// The predecessors of each state, each listed once: from[begin[t] ..
// begin[t + 1]) are the states with some byte into t.
struct DfaPredecessors {
  std::vector<uint32_t> begin;
  std::vector<int32_t> from;
  std::span<const int32_t> of(size_t t) const noexcept {
    return std::span(from).subspan(begin[t], begin[t + 1] - begin[t]);
  }
};

class Dfa {
 public:
  static constexpr int32_t kDead = -1;

  // Throws Error{kInvalidArgument, "pattern"} on a syntax error or a pattern
  // too large for max_states, Error{kUnsupported, "pattern"} on
  // backreferences, lookaround and other constructs a DFA cannot express.
  static Dfa compile(std::string_view pattern, const RegexOptions& opt = {});
  // The union of the alternatives; each accepting state knows which of them
  // (by index) accept there, so one pass can tell which one matched.
  static Dfa compile_labeled(std::span<const RegexAlternative> alts, const RegexOptions& opt = {});
  // Strings both accept (product construction); labels are dropped.
  static Dfa intersect(const Dfa& a, const Dfa& b, size_t max_states = 10000);
  // Strings any of the parts accepts (one subset construction for all of
  // them); labels are dropped.
  // `tick` runs once per state built (a compile budget's check; it may throw).
  static Dfa unite(std::span<const Dfa* const> parts, size_t max_states = 10000,
                   const std::function<void()>& tick = {});
  // The same, or nullopt past max_states.
  static std::optional<Dfa> try_unite(std::span<const Dfa* const> parts, size_t max_states,
                                      const std::function<void()>& tick = {});
  // Strings both accept, with a's labels (a key automaton narrowed by
  // propertyNames still tells which property a name is).
  static Dfa restrict(const Dfa& a, const Dfa& b, size_t max_states = 10000);
  // Strings a accepts and b does not; labels are dropped.
  static Dfa subtract(const Dfa& a, const Dfa& b, size_t max_states = 10000);
  // From a transition table (states × 256, kDead for none) whose start is
  // state 0, with the accepting states marked; dead states are removed.
  static Dfa from_table(std::vector<int32_t> table, const std::vector<uint8_t>& accepting);
  // No string at all is accepted.
  bool empty() const noexcept { return start_ == kDead; }

  int32_t start() const noexcept { return start_; }
  int32_t next(int32_t state, uint8_t byte) const noexcept {
    return state < 0 ? kDead : table_[static_cast<size_t>(state) * 256 + byte];
  }
  bool accepting(int32_t state) const noexcept {
    return state >= 0 && accepting_[static_cast<size_t>(state)];
  }
  // Accepting with no way on: the match is over whatever follows.
  bool final(int32_t state) const noexcept {
    return state >= 0 && final_[static_cast<size_t>(state)];
  }
  std::span<const uint32_t> labels(int32_t state) const noexcept {
    if (state < 0) return {};
    const auto k = static_cast<size_t>(state);
    return std::span(labels_).subspan(label_begin_[k], label_begin_[k + 1] - label_begin_[k]);
  }
  size_t states() const noexcept { return accepting_.size(); }
  std::span<const int32_t> table() const noexcept { return table_; }
  // Made once when the DFA is built: compile and the matcher's setup walk
  // them backwards several times per DFA.
  const DfaPredecessors& predecessors() const noexcept { return preds_; }
  // Of a transition table (states × 256, kDead for none).
  static DfaPredecessors predecessors_of(std::span<const int32_t> table, size_t states);
  // Same states, transitions, acceptance and labels.
  bool operator==(const Dfa& o) const noexcept {
    return start_ == o.start_ && table_ == o.table_ && accepting_ == o.accepting_ &&
           final_ == o.final_ && labels_ == o.labels_ && label_begin_ == o.label_begin_;
  }
  uint64_t fingerprint() const noexcept;
  // Bytes its tables hold (what a compile budget charges for a kept DFA).
  size_t memory_bytes() const noexcept;
  bool matches(std::string_view bytes) const noexcept;

  // The token-trie automaton interface.
  bool step(const int32_t& state, uint8_t byte, int32_t& out) const noexcept {
    out = next(state, byte);
    return out != kDead;
  }

 private:
  static Dfa product(const Dfa& a, const Dfa& b, size_t max_states, bool minus,
                     bool keep_labels = false);
  // Labels per state → acceptance, dead-state removal, final states.
  void finish(const std::vector<std::vector<uint32_t>>& labels);

  std::vector<int32_t> table_;  // states() × 256
  std::vector<uint8_t> accepting_;
  std::vector<uint8_t> final_;
  std::vector<uint32_t> labels_, label_begin_;
  DfaPredecessors preds_;  // derived from table_; not part of equality
  int32_t start_ = kDead;
};

}  // namespace nextok::constraint
