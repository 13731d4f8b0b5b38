// RFC 8259 JSON as a byte automaton with a bounded container stack, small
// enough to copy per trie depth. Strings are checked as UTF-8, numbers by
// the RFC grammar, whitespace runs are bounded so a model cannot stall in
// them, and nesting is bounded by kMaxDepth.
#pragma once

#include <cstdint>

namespace nextok::constraint {

struct JsonOptions {
  bool object_only = true;      // the top-level value must be an object (json_object)
  uint8_t max_whitespace = 20;  // longest run of whitespace bytes
};

struct JsonState {
  uint64_t objects = 0;  // bit d: the container at depth d is an object
  uint8_t depth = 0;
  uint8_t lex = 0;
  uint8_t aux = 0;   // literal position, \u digits left, or UTF-8 bytes left
  uint8_t aux2 = 0;  // literal id, or the next UTF-8 byte's range class
  uint8_t ws = 0;    // current whitespace run
  bool key = false;  // the open string is an object key
};

class JsonGrammar {
 public:
  static constexpr int kMaxDepth = 64;
  explicit JsonGrammar(JsonOptions opt = {}) : opt_(opt) {}

  JsonState start() const noexcept { return {}; }
  // The token-trie automaton interface: false rejects the byte.
  bool step(const JsonState& s, uint8_t b, JsonState& out) const noexcept;
  // A complete top-level value has been read (EOS may come now).
  bool complete(const JsonState& s) const noexcept;
  // Some byte may still follow (false only when nothing but EOS fits).
  bool can_continue(const JsonState& s) const noexcept;

 private:
  bool value_start(JsonState& o, uint8_t b) const noexcept;
  bool after_value(JsonState& o, uint8_t b) const noexcept;
  bool whitespace(JsonState& o, uint8_t b) const noexcept;
  JsonOptions opt_;
};

}  // namespace nextok::constraint
