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

class FreeTextMasks;

// A UTF-8 reader's state: 0 at a character boundary; 1-3 continuation
// bytes still due; 4-7 the second byte of E0, ED, F0, F4 sequences, whose
// range is narrower. next() gives the state after byte b, or -1 when b
// cannot come there (RFC 3629: no overlongs, surrogates or code points
// past U+10FFFF).
struct Utf8Reader {
  static constexpr int kStates = 8;
  static int next(int s, uint8_t b) noexcept {
    const auto in = [b](unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
    switch (s) {
      case 0:
        if (b < 0x80) return 0;
        if (in(0xC2, 0xDF)) return 1;
        if (b == 0xE0) return 4;
        if (b == 0xED) return 5;
        if (in(0xE1, 0xEF)) return 2;
        if (b == 0xF0) return 6;
        if (in(0xF1, 0xF3)) return 3;
        if (b == 0xF4) return 7;
        return -1;
      case 1:
      case 2:
      case 3:
        return in(0x80, 0xBF) ? s - 1 : -1;
      case 4:
        return in(0xA0, 0xBF) ? 1 : -1;
      case 5:
        return in(0x80, 0x9F) ? 1 : -1;
      case 6:
        return in(0x90, 0xBF) ? 2 : -1;
      case 7:
        return in(0x80, 0x8F) ? 2 : -1;
      default:
        return -1;
    }
  }
};

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
  // use, thread-safe. Nodes share a table of the distinct sets (34k for
  // Llama-3.1's 275k nodes): 4 bytes a node, not 33, for a walk to read
  // from memory when the trie is cold.
  using Bytes = std::array<uint64_t, 4>;
  class BelowBytes {
   public:
    BelowBytes(const uint32_t* index, const Bytes* sets, size_t n)
        : index_(index), sets_(sets), n_(n) {}
    const Bytes& operator[](size_t node) const noexcept { return sets_[index_[node]]; }
    size_t size() const noexcept { return n_; }

   private:
    const uint32_t* index_;
    const Bytes* sets_;
    size_t n_;
  };
  BelowBytes bytes_below() const;
  // Per node, bit 0: every token's bytes after this node, read from a
  // character boundary, are well-formed UTF-8 (a last character may be cut
  // short). Other bits: the same from inside a character (Utf8Reader's
  // states). Made with bytes_below(), through the same table.
  class BelowUtf8 {
   public:
    BelowUtf8(const uint32_t* index, const uint8_t* flags) : index_(index), flags_(flags) {}
    uint8_t operator[](size_t node) const noexcept { return flags_[index_[node]]; }

   private:
    const uint32_t* index_;
    const uint8_t* flags_;
  };
  BelowUtf8 utf8_below() const;
  // The kept masks of free-text states (free_text_masks.hpp), shared by
  // every walk over this trie: every grammar and thread of a TokenIndex.
  FreeTextMasks& free_text_masks() const noexcept { return *free_text_; }

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
    std::vector<uint32_t> index;  // per node, into bytes and utf8
    std::vector<Bytes> bytes;
    std::vector<uint8_t> utf8;
  };
  void make_below() const;
  std::unique_ptr<Below> below_ = std::make_unique<Below>();
  std::shared_ptr<FreeTextMasks> free_text_;  // made by the constructor, where it is complete
};

// Sets the mask bit of each id (unrolled: the walks call it per subtree).
[[gnu::always_inline]] inline void set_token_bits(std::span<const uint32_t> ids,
                                                  uint32_t* mask) noexcept {
  const uint32_t* p = ids.data();
  const size_t n = ids.size();
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t a = p[k], b = p[k + 1], c = p[k + 2], d = p[k + 3];
    mask[a >> 5] |= 1u << (a & 31);
    mask[b >> 5] |= 1u << (b & 31);
    mask[c >> 5] |= 1u << (c & 31);
    mask[d >> 5] |= 1u << (d & 31);
  }
  for (; k < n; ++k) mask[p[k] >> 5] |= 1u << (p[k] & 31);
}

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
    set_token_bits(std::span<const uint32_t>(tokens_).subspan(node.first_token, node.token_count),
                   mask.data());
    ++i;
  }
}

}  // namespace nextok::constraint
