// Token bitmask: uint32 words, ceil(V/32) of them; bit (i % 32) of word
// (i / 32) set means token i is allowed. Same layout as XGrammar/llguidance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace nextok {

constexpr std::size_t bitmask_words(std::size_t vocab) noexcept { return (vocab + 31) / 32; }

constexpr bool bitmask_allows(std::span<const std::uint32_t> mask, std::size_t token) noexcept {
  return ((mask[token / 32] >> (token % 32)) & 1U) != 0;
}

inline void bitmask_set(std::span<std::uint32_t> mask, std::size_t token, bool allowed) noexcept {
  const std::uint32_t bit = 1U << (token % 32);
  mask[token / 32] = allowed ? (mask[token / 32] | bit) : (mask[token / 32] & ~bit);
}

}  // namespace nextok
