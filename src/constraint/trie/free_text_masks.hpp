// Masks of the tokens a free-text state reads without leaving itself,
// kept per state description. A state that reads most bytes back into
// itself (the inside of a string or a comment) allows ~120 k tokens of a
// 128 k vocabulary; setting them bit by bit from the trie is most of such a
// mask's time, and the set depends only on which bytes loop, not on the
// grammar or the context. So a walk that enters such a state from its root
// starts from the kept mask and sets only what leaves the state.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

// A free-text state as the trie walk sees it from the walk's root: the
// bytes that lead into it from the root (`first`), the bytes it reads
// back into itself (`loop`; the same sets when the root is the state),
// and whether every character of two bytes or more leads back into it
// (`closed`) and into it from the root (`first_wide`), every way live.
struct FreeText {
  // Worth a kept mask where this many ASCII first bytes lead into the state
  // and as many loop on it: a string's or a comment's inside, not a name's.
  static constexpr int kMinAscii = 64;

  TokenTrie::Bytes first{}, loop{};
  bool closed = false, first_wide = false;
  bool operator==(const FreeText&) const = default;

  static bool has(const TokenTrie::Bytes& set, uint8_t b) noexcept {
    return ((set[b >> 6] >> (b & 63)) & 1) != 0;
  }
  static bool inside(const TokenTrie::Bytes& a, const TokenTrie::Bytes& b) noexcept {
    return ((a[0] & ~b[0]) | (a[1] & ~b[1]) | (a[2] & ~b[2]) | (a[3] & ~b[3])) == 0;
  }
  // Where a path that has stayed in the state goes on byte b: 0 in the
  // state (at a character boundary), 1-7 inside a character that leads
  // back into it (Utf8Reader's states), -1 out of it. k: where it was;
  // first_char: the byte begins the path's first character.
  int next(int k, uint8_t b, bool first_char) const noexcept {
    if (k > 0) return Utf8Reader::next(k, b);
    if (has(first_char ? first : loop, b)) return 0;
    if (b < 0x80 || !(first_char ? first_wide : closed)) return -1;
    const int r = Utf8Reader::next(0, b);
    return r > 0 ? r : -1;
  }
  // Whether every token below a node where the path is at k stays in the
  // state (`below`, `utf8`: TokenTrie::bytes_below and utf8_below there).
  bool all_below(int k, const TokenTrie::Bytes& below, uint8_t utf8) const noexcept {
    if (k == 0 && inside(below, loop)) return true;
    return closed && ((utf8 >> k) & 1) != 0 && inside({below[0], below[1], 0, 0}, loop);
  }
};

// The state most first bytes of a walk lead to: votes per child state (a
// walk's root has few children, so a short list).
class FreeTextVotes {
 public:
  void add(int32_t state, int votes) noexcept {
    size_t k = 0;
    while (k < used_ && v_[k].first != state) ++k;
    if (k == used_) {
      if (used_ == v_.size()) return;
      v_[used_++] = {state, 0};
    }
    v_[k].second += votes;
  }
  // The state with the most votes and their count; {-1, 0} with none.
  std::pair<int32_t, int> best() const noexcept {
    std::pair<int32_t, int> top{-1, 0};
    for (size_t k = 0; k < used_; ++k) {
      if (v_[k].second > top.second) top = v_[k];
    }
    return top;
  }

 private:
  std::array<std::pair<int32_t, int>, 16> v_{};
  size_t used_ = 0;
};

// One per trie (TokenTrie::free_text_masks), shared by every walker of
// every grammar on it and thread-safe: a mask is made once per process, not
// once per walker and grammar.
class FreeTextMasks {
 public:
  using Mask = std::shared_ptr<const std::vector<uint32_t>>;
  // The tokens whose every byte keeps a path from the root in the state
  // (FreeText::next never -1): bitmask_words(vocab) words, kept until
  // kKept other states have been asked for (a holder keeps its copy).
  Mask get(const TokenTrie& trie, const FreeText& state);
  // ORs that mask into `mask`.
  void add_to(const TokenTrie& trie, const FreeText& state, std::span<uint32_t> mask) {
    const Mask kept = get(trie, state);
    for (size_t w = 0; w < kept->size(); ++w) mask[w] |= (*kept)[w];
  }
  // Masks made so far (tests: each state's once).
  size_t made() const;

  static constexpr size_t kKept = 16;

  // The mask of `state` by a walk of the trie's free-text paths (~0.3 ms
  // for 128 k tokens), and by the index below where it applies (the tests
  // hold the two equal).
  static Mask walk(const TokenTrie& trie, const FreeText& state);
  std::optional<Mask> from_index(const TokenTrie& trie, const FreeText& state);
  // Builds the index now (~10 ms for 128 k tokens; else at the first mask).
  void prepare(const TokenTrie& trie) { (void)index(trie); }

 private:
  // Where `first` and `loop` are ASCII, a token stays in the state exactly
  // when its bytes are well-formed UTF-8 (a last character may be cut
  // short), its first byte is in `first` (or wide with first_wide), every
  // later ASCII byte is in `loop`, and it has no later wide character
  // unless `closed`. So the mask is every well-formed token less the lists
  // of tokens each missing byte rules out: a copy and a few thousand bits
  // for a string's inside, instead of a walk that sets ~120 k.
  struct Index {
    std::vector<uint32_t> well_formed;  // mask: tokens of well-formed UTF-8
    // Lists of well-formed tokens, begin offsets per key: keys 0-127 first
    // byte, 128 wide first byte; 129-256 an ASCII byte after the first,
    // 257 a wide character after the first.
    std::vector<uint32_t> begin, ids;
  };
  const Index& index(const TokenTrie& trie);
  std::once_flag index_once_;
  Index index_;
  mutable std::mutex mu_;
  std::vector<std::pair<FreeText, Mask>> entries_;
  size_t next_ = 0;  // the entry replaced next once kKept are kept
  size_t made_ = 0;
};

}  // namespace nextok::constraint
