// Code-point ranges as UTF-8 byte-range sequences, so automata can run on
// bytes (the token trie's alphabet) while patterns speak code points.
#pragma once

#include <cstdint>
#include <vector>

namespace nextok::constraint {

struct ByteRange {
  uint8_t lo, hi;
};

// Appends sequences of byte ranges whose concatenations match exactly the
// UTF-8 encodings of the code points in [lo, hi] (surrogates excluded).
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out);

}  // namespace nextok::constraint
