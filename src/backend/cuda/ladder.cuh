// The candidate ladders of the fast path: the spec order's levels on the
// weight e (with exact integer masses) and the top_k_first order's levels on
// the exp argument t, plus their exhaustive GPU checks.
#pragma once

#include "backend/cuda/row_cluster.cuh"

namespace nextok::cuda::dev {

constexpr int kLevels = 16;
__constant__ float kLadder[kLevels] = {
    0.70710678f,  0.5f,          0.35355339f,      0.25f,
    0.17677670f,  0.125f,        0.088388348f,     0.0625f,
    0.044194174f, 0.03125f,      0.022097087f,     0.015625f,
    0.00390625f,  0.0009765625f, 0.0001220703125f, 0.0000152587890625f};
__device__ __forceinline__ float ladder_level(int l) {
  return kLadder[l];
}
// e >= 2^-16, so e * 2^39 is an integer: exact, order-free masses.
__device__ __forceinline__ unsigned long long fixed39(float e) {
  const std::uint32_t k = __float_as_uint(e);
  const int ex = static_cast<int>((k >> 23) & 0xFFU);
  return static_cast<unsigned long long>((k & 0x7FFFFFU) | 0x800000U) << (ex - 111);
}

// Level of a weight 0 <= e <= 1 from its exponent: kk = 127 - exponent
// (e in [2^-kk, 2^(1-kk))). Levels 0-11 pair up per exponent (the power of
// two 2^-kk and the half step kLadder[2kk-2] inside [2^-kk, 2^(1-kk))): e
// and the half step share the exponent, so comparing significands decides
// (every half step's significand is 0x3504F3 except 0x3504F4 at kk = 3).
// Levels 12-15 are whole exponent ranges. 4-bit fields of two 64-bit
// constants give, for kk = 0..15 (16 as 15), the level before the half-step
// bit and kmax - 1. ladder_lut_init turns them into a table in shared
// memory (kk 17: below 2^-16, or e == 0): a shift and one load instead of
// ~20 instructions an id in the exp pass. Returns the same level as counting the thresholds above e
// (16: below 2^-16, or e == 0), which CudaPipeline.LadderLevelOfEveryFloat checks for every float
// in [0, 1]. v = significand << (kmax - kk), kmax the largest kk of the level, so e * 2^39 = v <<
// (16 - kmax): per-thread per-level sums fit in 32 bits (P < 64, v < 2^26).
constexpr unsigned long long kLevelBase = 0xFFEEEDDCCA864200ULL;  // kk 0..15
constexpr unsigned long long kLevelKmax = 0xFFCCC99775432100ULL;  // kmax - 1
// Entry kk: x = half-step significand (0: none) | base level << 24;
// y = kmax - kk (the mass shift).
__device__ __forceinline__ uint2 ladder_lut_entry(int kk) {
  kk = min(max(kk, 0), 17);
  const int kc = min(kk, 15);
  const int kmax = static_cast<int>((kLevelKmax >> (4 * kc)) & 15U) + 1;
  const int base = kk > 16 ? 16 : static_cast<int>((kLevelBase >> (4 * kc)) & 15U);
  const std::uint32_t half = kk >= 1 && kk <= 6 ? 0x3504F3U + (kk == 3 ? 1U : 0U) : 0U;
  return make_uint2(half | (static_cast<std::uint32_t>(base) << 24),
                    kk > 16 ? 0U : static_cast<std::uint32_t>(kmax - kk));
}
// Indexed by the exponent byte (kk = 127 - byte, clamped to 0..17), so an id
// costs a shift and a load. Every thread of the block calls it; the table is
// read after a barrier. The pipeline keeps it in dynamic shared memory that
// is dead until the radix path (ladder_lut_of): 2 KB more static shared
// memory cost V 151936 its 4-block clusters (B >= 64).
constexpr int kLadderLut = 256;
__device__ __forceinline__ void ladder_lut_init(uint2* lut) {
  for (int i = static_cast<int>(threadIdx.x); i < kLadderLut; i += static_cast<int>(blockDim.x))
    lut[i] = ladder_lut_entry(127 - i);
}
__device__ __forceinline__ uint2* ladder_lut_of(RowSmem* sm) {
  static_assert(sizeof(RowSmem::g_w) / 2 >= kLadderLut * sizeof(uint2), "the table fits");
  return reinterpret_cast<uint2*>(sm->g_w + kMaxBuckets / 2);
}
__device__ __forceinline__ int ladder_bin(float e, const uint2* lut, std::uint32_t& v) {
  const std::uint32_t k = __float_as_uint(e);  // e >= 0: the sign bit is clear
  const uint2 t = lut[k >> 23];
  const std::uint32_t mant = k & 0x7FFFFFU;
  v = (mant | 0x800000U) << t.y;
  return static_cast<int>(t.x >> 24) + (mant < (t.x & 0x7FFFFFU) ? 1 : 0);
}
__device__ __forceinline__ int ladder_kmax(int l) {
  return l < 12 ? l / 2 + 1 : (l == 12 ? 8 : (l == 13 ? 10 : (l == 14 ? 13 : 16)));
}

// Test hook: every float bit pattern in [0, 1] (0 .. 0x3F800000) against
// counting the thresholds above it, and its scaled mass against e * 2^39.
__global__ void ladder_check_kernel(unsigned long long* bad) {
  __shared__ uint2 lut[kLadderLut];
  ladder_lut_init(lut);
  __syncthreads();
  const std::uint32_t n = 0x3F800000U + 1U;
  unsigned long long mine = 0;
  for (std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += gridDim.x * blockDim.x) {
    const float e = __uint_as_float(k);
    int want = 0;
    for (int l = 0; l < kLevels; ++l) want += e < kLadder[l] ? 1 : 0;
    std::uint32_t v = 0;
    const int got = ladder_bin(e, lut, v);
    bool ok = got == want;
    if (ok && got < kLevels) {
      const int kmax = ladder_kmax(got);
      ok = ldexp(static_cast<double>(v), 16 - kmax) == ldexp(static_cast<double>(e), 39);
    }
    mine += ok ? 0ULL : 1ULL;
  }
  if (mine != 0ULL) atomicAdd(bad, mine);
}

// top_k_first ladder: top-k runs first over every id and only needs counts,
// so the levels are taken on the exp argument t = w/T - m/T <= 0 itself (no
// exp per id), from the bits of d = -t (ordered like d): level i holds
// exactly the ids with bits(d) < lo + i * 2^sh (level 0: below lo; 16: no
// level). The coarse pass uses half octaves from lo = bits(0.375) (level 15:
// d < 64), the fine pass 1/16 octaves inside the chosen coarse level.
constexpr std::uint32_t kKfirstLo = 251U << 22;  // bits of 0.375
constexpr int kCoarseShift = 22;                 // half octaves
constexpr int kFineShift = 19;                   // 1/16 octaves
// `none`: the level past the last (kLevels for the packed 16-level ladders).
__device__ __forceinline__ int ladder_rel(float t, std::uint32_t lo, int sh, int none = kLevels) {
  const int rel = static_cast<int>(__float_as_uint(t) & 0x7FFFFFFFU) - static_cast<int>(lo);
  return rel < 0 ? 0 : min((rel >> sh) + 1, none);
}
__device__ __forceinline__ float ladder_bound(std::uint32_t lo, int sh, int i) {
  return __uint_as_float(lo + (static_cast<std::uint32_t>(i) << sh));
}

// Test hook: exp_f32 is non-decreasing over every float in [-inf, 0] (the
// top_k_first ladder relies on it): counts the t whose next float up has a
// smaller exp, and every x <= 0 (and NaN) where exp_f32_nonpos differs
// from exp_f32 in any bit.
__global__ void exp_monotone_check_kernel(unsigned long long* bad) {
  // Negative floats: bits 0x80000000 (-0) .. 0xFF800000 (-inf); the next
  // float up of bits k is k - 1.
  const std::uint32_t n = 0x7F800000U;
  unsigned long long mine = 0;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const std::uint32_t k = 0x80000001U + i;  // t = -(tiny) .. -inf
    const float e = exp_f32(__uint_as_float(k));
    mine += e > exp_f32(__uint_as_float(k - 1U)) ? 1ULL : 0ULL;
    mine += __float_as_uint(e) != __float_as_uint(exp_f32_nonpos(__uint_as_float(k))) ? 1ULL : 0ULL;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {  // +0, -0, NaN
    for (const std::uint32_t k : {0x00000000U, 0x80000000U, 0x7FC00000U, 0xFFC00000U})
      mine += __float_as_uint(exp_f32(__uint_as_float(k))) !=
                      __float_as_uint(exp_f32_nonpos(__uint_as_float(k)))
                  ? 1ULL
                  : 0ULL;
  }
  if (mine != 0ULL) atomicAdd(bad, mine);
}

}  // namespace nextok::cuda::dev
