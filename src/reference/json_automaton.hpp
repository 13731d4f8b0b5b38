// Test reference: RFC 8259 JSON as a byte automaton with a bounded container stack, small
// enough to copy per trie depth. Strings are checked as UTF-8, numbers by
// the RFC grammar, whitespace runs are bounded so a model cannot stall in
// them, and nesting is bounded by kMaxDepth.
#pragma once

#include <cstdint>

namespace nextok::reference {

struct JsonAutomatonOptions {
  bool object_only = true;      // the top-level value must be an object (json_object)
  uint8_t max_whitespace = 20;  // longest run of whitespace bytes
};

struct JsonAutomatonState {
  uint64_t objects = 0;  // bit d: the container at depth d is an object
  uint8_t depth = 0;
  uint8_t lex = 0;
  uint8_t aux = 0;   // literal position, \u digits left, or UTF-8 bytes left
  uint8_t aux2 = 0;  // literal id, or the next UTF-8 byte's range class
  uint8_t ws = 0;    // current whitespace run
  bool key = false;  // the open string is an object key
};

class JsonAutomaton {
 public:
  static constexpr int kMaxDepth = 64;
  explicit JsonAutomaton(JsonAutomatonOptions opt = {}) : opt_(opt) {}

  JsonAutomatonState start() const noexcept { return {}; }
  // The token-trie automaton interface: false rejects the byte.
  bool step(const JsonAutomatonState& s, uint8_t b, JsonAutomatonState& out) const noexcept;
  // A complete top-level value has been read (EOS may come now).
  bool complete(const JsonAutomatonState& s) const noexcept;
  // Some byte may still follow (false only when nothing but EOS fits).
  bool can_continue(const JsonAutomatonState& s) const noexcept;

 private:
  bool value_start(JsonAutomatonState& o, uint8_t b) const noexcept;
  bool after_value(JsonAutomatonState& o, uint8_t b) const noexcept;
  bool whitespace(JsonAutomatonState& o, uint8_t b) const noexcept;
  JsonAutomatonOptions opt_;
};

}  // namespace nextok::reference
