// Byte-pair merging of one pre-tokenized word: the lowest-rank adjacent
// pair merges first, the leftmost one on ties (HF `tokenizers`' order).
#pragma once

#include <cstdint>
#include <vector>

#include "vocab/hash.hpp"

namespace nextok::vocab {

// Merges `ids` in place. Short words use a scan per merge; long ones a heap
// (the two are proven equal in tests).
void bpe_merge(const PairTable& merges, std::vector<uint32_t>& ids);

// Exposed for tests: the two strategies.
void bpe_merge_scan(const PairTable& merges, std::vector<uint32_t>& ids);
void bpe_merge_heap(const PairTable& merges, std::vector<uint32_t>& ids);

}  // namespace nextok::vocab
