// A byte trie over a vocabulary's token bytes, laid out in depth-first
// order so that a mask computation can walk it with a byte automaton and
// skip a whole subtree the moment the automaton rejects its first byte.
// It knows nothing about JSON or grammars; engines supply the automaton.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "nextok/vocab.hpp"

namespace nextok::constraint {

class TokenTrie {
 public:
  // Every token with bytes except special ones (engines decide about those:
  // EOS is allowed exactly when the output is complete).
  explicit TokenTrie(const Vocabulary& vocab);

  struct Node {
    uint32_t end;          // one past the last node of this subtree
    uint32_t first_token;  // into tokens(): ids whose bytes end here
    uint16_t token_count;
    uint8_t byte;   // the byte on the edge into this node
    uint8_t depth;  // bytes from the root, saturating at 255
  };
  // Node 0 is the root (no byte); the rest in depth-first order.
  std::span<const Node> nodes() const noexcept { return nodes_; }
  std::span<const uint32_t> tokens() const noexcept { return tokens_; }
  size_t vocab_size() const noexcept { return vocab_size_; }
  size_t max_depth() const noexcept { return max_depth_; }
  // The ids of every token in node i's subtree (node i's own included):
  // tokens are stored in depth-first order, so they are one run.
  std::span<const uint32_t> subtree_tokens(size_t i) const noexcept {
    const size_t end = nodes_[i].end;
    const size_t hi = end < nodes_.size() ? nodes_[end].first_token : tokens_.size();
    return std::span(tokens_).subspan(nodes_[i].first_token, hi - nodes_[i].first_token);
  }

  // Per node: the bytes on the edges below it (256 bits). Made on first
  // use, thread-safe; 32 bytes a node.
  using Bytes = std::array<uint64_t, 4>;
  std::span<const Bytes> bytes_below() const;

  // Sets the mask bit of every token whose bytes the automaton accepts byte
  // by byte from `start`. Automaton: `bool step(const State&, uint8_t,
  // State&)` returns false to reject. Rejection skips the whole subtree.
  // `mask` has bitmask_words(vocab_size()) words and is OR-ed into.
  template <class Automaton, class State>
  void allow(const Automaton& a, const State& start, std::span<uint32_t> mask) const;

 private:
  std::vector<Node> nodes_;
  std::vector<uint32_t> tokens_;
  size_t vocab_size_ = 0;
  size_t max_depth_ = 0;
  struct Below {
    std::once_flag once;
    std::vector<Bytes> bytes;
  };
  std::unique_ptr<Below> below_ = std::make_unique<Below>();
};

template <class Automaton, class State>
void TokenTrie::allow(const Automaton& a, const State& start, std::span<uint32_t> mask) const {
  // states[d] is the automaton after the first d bytes of the current path.
  std::vector<State> states(max_depth_ + 1);
  states[0] = start;
  const size_t n = nodes_.size();
  for (size_t i = 1; i < n;) {
    const Node& node = nodes_[i];
    if (!a.step(states[node.depth - 1u], node.byte, states[node.depth])) {
      i = node.end;  // nothing below can be accepted either
      continue;
    }
    for (uint32_t k = 0; k < node.token_count; ++k) {
      const uint32_t id = tokens_[node.first_token + k];
      mask[id >> 5] |= 1u << (id & 31);
    }
    ++i;
  }
}

}  // namespace nextok::constraint
