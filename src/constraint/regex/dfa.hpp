// A byte-level DFA compiled from a regular expression (the ECMA-262 subset
// JSON Schema `pattern` uses, without backreferences or lookaround).
// States that cannot reach acceptance are removed, so a rejected byte means
// no continuation can ever match: what a token-trie walk needs to prune.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nextok::constraint {

struct RegexOptions {
  // JSON Schema `pattern` matches anywhere in the string unless anchored
  // with ^ and $; full_match = true matches the whole input instead.
  bool full_match = true;
  size_t max_states = 10000;  // DFA states; past it, compile fails clearly
};

class Dfa {
 public:
  static constexpr int32_t kDead = -1;

  // Throws Error{kInvalidArgument, "pattern"} on a syntax error or a pattern
  // too large for max_states, Error{kUnsupported, "pattern"} on
  // backreferences, lookaround and other constructs a DFA cannot express.
  static Dfa compile(std::string_view pattern, const RegexOptions& opt = {});

  int32_t start() const noexcept { return start_; }
  int32_t next(int32_t state, uint8_t byte) const noexcept {
    return state < 0 ? kDead : table_[static_cast<size_t>(state) * 256 + byte];
  }
  bool accepting(int32_t state) const noexcept {
    return state >= 0 && accepting_[static_cast<size_t>(state)];
  }
  size_t states() const noexcept { return accepting_.size(); }
  bool matches(std::string_view bytes) const noexcept;

  // The token-trie automaton interface.
  bool step(const int32_t& state, uint8_t byte, int32_t& out) const noexcept {
    out = next(state, byte);
    return out != kDead;
  }

 private:
  std::vector<int32_t> table_;  // states() × 256
  std::vector<uint8_t> accepting_;
  int32_t start_ = kDead;
};

}  // namespace nextok::constraint
