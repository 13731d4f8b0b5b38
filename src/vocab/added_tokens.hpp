// Finds added tokens in text: leftmost match, longest at that position,
// the rule HF `tokenizers` applies before any normalization or BPE.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace nextok::vocab {

class AddedTokenMatcher {
 public:
  void add(std::string_view content, uint32_t id, bool special);
  // Call once after the last add() and before find().
  void finish();
  bool empty() const noexcept { return nodes_.size() <= 1; }

  struct Match {
    size_t begin = 0, end = 0;
    uint32_t id = 0;
  };
  // The next match at or after `from`; special tokens only when allowed.
  bool find(std::string_view text, size_t from, bool allow_special, Match& m) const noexcept;

 private:
  struct Node {
    uint32_t first_child = 0;  // index into edges_, sorted by byte
    uint32_t child_count = 0;
    uint32_t token = ~0u;
    bool special = false;
  };
  struct Edge {
    uint8_t byte;
    uint32_t node;
  };
  // Built as a pointer trie, then flattened for cache-friendly lookups.
  struct BuildNode {
    std::vector<std::pair<uint8_t, uint32_t>> children;
    uint32_t token = ~0u;
    bool special = false;
  };
  std::vector<BuildNode> build_{BuildNode{}};
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::array<bool, 256> first_byte_{};
};

}  // namespace nextok::vocab
