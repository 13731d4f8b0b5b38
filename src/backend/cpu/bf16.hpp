#pragma once

#include <bit>
#include <cstdint>

namespace nextok::cpu {

inline float bf16_to_f32(std::uint16_t v) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v) << 16);
}

// Round-to-nearest-even; NaN stays NaN.
inline std::uint16_t f32_to_bf16(float f) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((u >> 16) | 0x40U);
  const std::uint32_t rounding = 0x7fffU + ((u >> 16) & 1U);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

}  // namespace nextok::cpu
