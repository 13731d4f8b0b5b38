// Scalar exp used by every ISA; the AVX2 kernel mirrors these exact steps.
// Cephes-style range reduction + degree-5 polynomial, about 2 ulp, with a
// split 2^n scale so results stay correct down into the subnormal range.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace nextok::cpu::expc {

inline constexpr float kLo = -104.0f;  // below this, e^x rounds to 0 in float
inline constexpr float kHi = 88.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kC1 = 0.693359375f;
inline constexpr float kC2 = -2.12194440e-4f;
inline constexpr float kP0 = 1.9875691500e-4f;
inline constexpr float kP1 = 1.3981999507e-3f;
inline constexpr float kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f;
inline constexpr float kP4 = 1.6666665459e-1f;
inline constexpr float kP5 = 5.0000001201e-1f;

inline float pow2i(std::int32_t n) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(n + 127) << 23);
}

inline float exp_f32(float x) noexcept {
  if (!(x >= kLo)) return 0.0f;  // also maps -Inf to 0
  if (x > kHi) x = kHi;
  const float fx = std::floor(x * kLog2e + 0.5f);
  float r = x - fx * kC1;
  r = r - fx * kC2;
  const float z = r * r;
  float y = kP0;
  y = y * r + kP1;
  y = y * r + kP2;
  y = y * r + kP3;
  y = y * r + kP4;
  y = y * r + kP5;
  y = y * z + r;
  y = y + 1.0f;
  const auto n = static_cast<std::int32_t>(fx);
  const std::int32_t n1 = n >> 1;
  const std::int32_t n2 = n - n1;
  return (y * pow2i(n1)) * pow2i(n2);
}

}  // namespace nextok::cpu::expc
