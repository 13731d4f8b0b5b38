// Per-ISA tables behind model/cpu/quant.hpp, and the scalar helpers both
// ISAs share. Each ISA mirrors the AVX2 path of ggml's CPU backend (8 float
// lanes, one fused multiply-add per lane and block, the same horizontal sum),
// so the scalar and AVX2 tables agree bit for bit; tests/model_quant_test.cpp
// checks that.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "model/cpu/quant.hpp"

namespace nextok::model::quant {

struct Kernels {
  const char* name;
  void (*quantize_q8_0)(const float* x, BlockQ8_0* y, std::size_t n);
  void (*quantize_q8_1)(const float* x, BlockQ8_1* y, std::size_t n);
  float (*dot_q4_0_q8_0)(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x);
  float (*dot_q4_1_q8_1)(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x);
  float (*dot_q8_0_q8_0)(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x);
  // One weight row against m <= kMaxDotRows activation rows `stride` blocks apart.
  void (*dotm_q4_1_q8_1)(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x, std::size_t stride,
                         std::size_t m, float* out);
  void (*dotm_q8_0_q8_0)(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t stride,
                         std::size_t m, float* out);
  float (*dot_f16_f16)(std::size_t n, const std::uint16_t* w, const std::uint16_t* x);
  float (*dot_f32_f32)(std::size_t n, const float* w, const float* x);
};

const Kernels& scalar_kernels() noexcept;
// nullptr unless this build has the AVX2 file and the CPU has AVX2, FMA and F16C.
const Kernels* avx2_kernels() noexcept;
// AVX2 when available, unless NEXTOK_FORCE_ISA=scalar (read once).
const Kernels& active_kernels() noexcept;

// The AVX2 table; only defined in builds with quant_avx2.cpp.
const Kernels* avx2_kernels_table() noexcept;

// Internal linkage on purpose: quant_avx2.cpp is built with -mavx2, and its
// copies of these helpers must never be the ones the scalar kernels link to.
namespace {  // NOLINT: see above

// The 8-lane horizontal sum of ggml's AVX2 code: lanes l and l+4 first, then
// the even and odd pairs, then those two.
inline float hsum8(const float* l) noexcept {
  const float a0 = l[0] + l[4], a1 = l[1] + l[5], a2 = l[2] + l[6], a3 = l[3] + l[7];
  return (a0 + a2) + (a1 + a3);
}

// Round half to even independently of the FP environment, as the AVX2
// round instruction does with an immediate rounding mode.
inline float round_half_even(float v) noexcept {
  if (!(__builtin_fabsf(v) < 0x1p23f)) return v;  // already integral, or inf / NaN
  const auto i = static_cast<std::int32_t>(v);    // truncated
  const float r = v - static_cast<float>(i);      // exact, in (-1, 1)
  const bool odd = (i & 1) != 0;
  if (r > 0.5f || (r == 0.5f && odd)) return static_cast<float>(i + 1);
  if (r < -0.5f || (r == -0.5f && odd)) return static_cast<float>(i - 1);
  return static_cast<float>(i);
}

// cvtps2dq on an already rounded value: out of range and NaN give INT32_MIN.
inline std::int32_t to_i32(float r) noexcept {
  if (r >= -2147483648.0f && r < 2147483648.0f) return static_cast<std::int32_t>(r);
  return INT32_MIN;
}

inline std::int8_t saturate_i8(std::int32_t v) noexcept {
  return static_cast<std::int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}

inline float fp16_bits_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    const float mag = static_cast<float>(mant) * 0x1p-24f;  // zero or subnormal, exact
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(mag) | sign);
  }
  if (exp == 31) {  // inf, or a NaN quieted like vcvtph2ps does
    return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13) | (mant != 0 ? 0x400000u : 0u));
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline std::uint16_t f32_to_fp16_bits(float f) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {  // NaN: quiet, payload truncated (vcvtps2ph)
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
  }
  if (a >= 0x38800000u) {  // >= 2^-14: normal half, or overflow to inf
    std::uint32_t r = a - (112u << 23);
    r = (r + 0x0FFFu + ((r >> 13) & 1u)) >> 13;
    return static_cast<std::uint16_t>(sign | (r >= 0x7C00u ? 0x7C00u : r));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25 rounds to zero (2^-25 is a tie)
  // Subnormal half: the value in units of 2^-24, rounded half to even.
  const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126u - (a >> 23);  // 14 .. 24
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;
  return static_cast<std::uint16_t>(sign | q);
}

}  // namespace
}  // namespace nextok::model::quant
