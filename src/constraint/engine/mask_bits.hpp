// What every constraint engine's step_mask does around its own work: check
// the caller's mask against the vocabulary, clear it, and allow EOS.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "nextok/vocab.hpp"

namespace nextok::constraint {

// Throws kMaskSizeMismatch when `mask` is shorter than the vocabulary needs;
// clears it; returns the words the vocabulary uses.
inline size_t clear_mask(std::span<uint32_t> mask, const Vocabulary& vocab) {
  const size_t words = bitmask_words(vocab.size());
  if (mask.size() < words) {
    throw Error(ErrorCode::kMaskSizeMismatch, "mask",
                "mask has " + std::to_string(mask.size()) + " words; the vocabulary needs " +
                    std::to_string(words));
  }
  std::fill(mask.begin(), mask.end(), 0u);
  return words;
}

inline void allow_eos(std::span<uint32_t> mask, const Vocabulary& vocab) {
  for (const uint32_t id : vocab.eos_ids()) bitmask_set(mask, id, true);
}

}  // namespace nextok::constraint
