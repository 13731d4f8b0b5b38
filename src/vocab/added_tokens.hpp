// Finds added tokens in text: leftmost match, longest at that position,
// the rule HF `tokenizers` applies before any normalization or BPE, with
// each token's single_word, lstrip and rstrip.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "vocab/regex.hpp"

namespace nextok::vocab {

class AddedTokenMatcher {
 public:
  struct Rules {
    bool special = false;
    bool lstrip = false;       // the match takes the whitespace before it
    bool rstrip = false;       // and after it
    bool single_word = false;  // no word character may touch it
  };
  void add(std::string_view content, uint32_t id, Rules rules);
  // Call once after the last add() and before find().
  void finish();
  bool empty() const noexcept { return nodes_.size() <= 1; }

  struct Match {
    size_t begin = 0, end = 0;
    uint32_t id = 0;
  };
  // The next match at or after `from`, `from` being where the previous one
  // ended (lstrip takes no whitespace before it); special tokens only when
  // allowed. A single_word token touching a word character is passed over.
  bool find(std::string_view text, size_t from, bool allow_special, Match& m) const;

 private:
  struct Node {
    uint32_t first_child = 0;  // index into edges_, sorted by byte
    uint32_t child_count = 0;
    uint32_t token = ~0u;
    Rules rules;
  };
  // The leftmost-longest match at or after `from`, rules not applied.
  bool find_raw(std::string_view text, size_t from, bool allow_special, Match& m,
                Rules& rules) const noexcept;
  bool word_char_before(std::string_view text, size_t at) const;
  bool word_char_at(std::string_view text, size_t at) const;
  struct Edge {
    uint8_t byte;
    uint32_t node;
  };
  // Built as a pointer trie, then flattened for cache-friendly lookups.
  struct BuildNode {
    std::vector<std::pair<uint8_t, uint32_t>> children;
    uint32_t token = ~0u;
    Rules rules;
  };
  std::vector<BuildNode> build_{BuildNode{}};
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::array<bool, 256> first_byte_{};
  std::shared_ptr<const Regex> word_;  // one \\w character, when a token is single_word
};

}  // namespace nextok::vocab
