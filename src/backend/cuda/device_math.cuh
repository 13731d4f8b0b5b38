// Device copies of the host path's scalar math. The translation unit is built
// with -fmad=false so, like the host's -ffp-contract=off, no product is fused
// into an add: exp_f32 here returns the host's bits exactly.
#pragma once

#include <cstdint>

namespace nextok::cuda::dev {

constexpr float kNegInf = -__builtin_huge_valf();
constexpr float kPosInf = __builtin_huge_valf();

// The polynomial and scaling of backend/cpu/exp_f32.hpp, step by step, for
// x in [-104, 88] (callers guard the range).
__device__ __forceinline__ float exp_f32_core(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kC1 = 0.693359375f, kC2 = -2.12194440e-4f;
  constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f;
  constexpr float kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
  const float fx = floorf(x * kLog2e + 0.5f);
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
  const float s1 = __uint_as_float(static_cast<std::uint32_t>(n1 + 127) << 23);
  const float s2 = __uint_as_float(static_cast<std::uint32_t>(n2 + 127) << 23);
  return (y * s1) * s2;
}

constexpr float kExpLo = -104.0f, kExpHi = 88.0f;

// Mirrors backend/cpu/exp_f32.hpp: 0 below kExpLo and for NaN, clamped at kExpHi.
__device__ __forceinline__ float exp_f32(float x) {
  if (!(x >= kExpLo)) return 0.0f;
  return exp_f32_core(x > kExpHi ? kExpHi : x);
}

// exp_f32 for x <= 0 (the fast path's exp arguments t = w/T - m/T), branch
// free: below kExpLo (or NaN) the select returns 0 and the value computed on
// the way is discarded; no clamp at kExpHi. The same bits as exp_f32
// (exp_monotone_check_kernel compares them for every x <= 0); the exp pass
// runs it per id, where the branch and the clamp cost 4 instructions an id.
// The streaming kernel keeps exp_f32: there the branch-free form cost f32
// B = 256 ~5%.
__device__ __forceinline__ float exp_f32_nonpos(float x) {
  const bool live = x >= kExpLo;
  const float e = exp_f32_core(x);
  return live ? e : 0.0f;
}

// exp(x) by the hardware's ex2.approx (about 2 ulp), for normalisers that
// need ~1e-7 relative rather than the host's bits. NaN and x < -104 give 0,
// as exp_f32 does.
__device__ __forceinline__ float exp_approx(float x) {
  if (!(x >= -104.0f)) return 0.0f;
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}

// x << n with PTX's clamp: n >= 32 gives 0 (C++ leaves it undefined).
__device__ __forceinline__ std::uint32_t shl_clamped(std::uint32_t x, std::uint32_t n) {
  std::uint32_t r;
  asm("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(n));
  return r;
}

__device__ __forceinline__ float load_elem(const float* p, std::int64_t i) {
  return p[i];
}
__device__ __forceinline__ float load_elem(const std::uint16_t* p, std::int64_t i) {
  return __uint_as_float(static_cast<std::uint32_t>(p[i]) << 16);
}

__device__ __forceinline__ bool mask_allows(const std::uint32_t* row_mask, std::int64_t i) {
  return row_mask == nullptr || ((row_mask[i >> 5] >> (i & 31)) & 1U) != 0;
}

// Order-preserving float -> uint32 (larger float, larger integer; -0 == +0).
__device__ __forceinline__ std::uint32_t order_bits(float f) {
  if (f == 0.0f) f = 0.0f;
  const std::uint32_t u = __float_as_uint(f);
  return (u & 0x80000000U) != 0 ? ~u : (u | 0x80000000U);
}

// (value, index) argmax step: larger value wins, equal values keep the lower
// index. Index INT32_MAX marks "nothing yet".
struct ArgMax {
  float value;
  std::int32_t index;
};
__device__ __forceinline__ ArgMax better(ArgMax a, ArgMax b) {
  if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
  return a;
}
struct ArgMaxOp {
  __device__ __forceinline__ ArgMax operator()(ArgMax a, ArgMax b) const { return better(a, b); }
};

}  // namespace nextok::cuda::dev
