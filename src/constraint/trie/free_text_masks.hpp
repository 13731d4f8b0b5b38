// Masks of the tokens a free-text state reads without leaving itself,
// kept per loop set. A state that reads most bytes back into itself (the
// inside of a string or a comment) allows ~120 k tokens of a 128 k
// vocabulary; setting them bit by bit from the trie is most of such a
// mask's time, and the set depends only on the bytes that loop, not on the
// grammar or the context. So a walk whose root state loops on set L starts
// from the kept mask of L and sets only what leaves L.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

class FreeTextMasks {
 public:
  // Whether every token below a node whose bytes below are `below` (UTF-8
  // flags `utf8`, TokenTrie::utf8_below) reads back into a state looping on
  // `loop`: each byte loops, or the tokens are well-formed UTF-8 from a
  // character boundary, their ASCII bytes loop and the state reads every
  // longer character back into itself (`utf8_closed`).
  static bool fits(const TokenTrie::Bytes& loop, bool utf8_closed, const TokenTrie::Bytes& below,
                   uint8_t utf8) noexcept {
    const auto inside = [&loop](const TokenTrie::Bytes& a) {
      return ((a[0] & ~loop[0]) | (a[1] & ~loop[1]) | (a[2] & ~loop[2]) | (a[3] & ~loop[3])) == 0;
    };
    if (inside(below)) return true;
    return utf8_closed && (utf8 & 1) != 0 && inside({below[0], below[1], 0, 0});
  }

  // The tokens a walk sets while its path stays in a free-text state that
  // the bytes `first` lead to from the root and that loops on `loop` (the
  // same set when the root is that state): each token whose first byte is
  // in `first` and every later byte in `loop`, and the subtrees that fit()
  // at such nodes. bitmask_words(vocab) words, kept until kKept other sets
  // have been asked for.
  std::span<const uint32_t> get(const TokenTrie& trie, const TokenTrie::Bytes& first,
                                const TokenTrie::Bytes& loop, bool utf8_closed);

  static constexpr size_t kKept = 8;

 private:
  struct Entry {
    const TokenTrie* trie = nullptr;
    TokenTrie::Bytes first{}, loop{};
    bool closed = false;
    std::vector<uint32_t> mask;
  };
  std::vector<Entry> entries_;
  size_t next_ = 0;  // the entry replaced next once kKept are kept
};

}  // namespace nextok::constraint
