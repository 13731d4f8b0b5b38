// AVX2 kernels. Compiled with -mavx2 and only called after a CPU check.
// Every function mirrors kernels_scalar.cpp operation for operation.
#include <immintrin.h>

#include <cmath>
#include <limits>

#include "backend/cpu/exp_f32.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/lane_sums.hpp"
#include "backend/cpu/scalar_loops.hpp"

namespace nextok::cpu {
namespace {

inline __m256i lane_bits() {
  return _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
}

// All-ones lanes where the mask allows tokens i .. i+7 (i a multiple of 8).
inline __m256 allowed_lanes(const std::uint32_t* mask, std::size_t i) {
  const auto bits = static_cast<int>((mask[i / 32] >> (i % 32)) & 0xFFU);
  const __m256i lb = lane_bits();
  const __m256i sel = _mm256_and_si256(_mm256_set1_epi32(bits), lb);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(sel, lb));
}

inline __m256 load8(const float* x) {
  return _mm256_loadu_ps(x);
}
inline __m256 load8(const std::uint16_t* x) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

template <typename T>
ArgmaxResult argmax_impl(const T* x, std::size_t n, const std::uint32_t* mask) {
  const __m256 neg_inf = _mm256_set1_ps(kNegInf);
  __m256 best = neg_inf;
  __m256i best_idx = _mm256_set1_epi32(-1);
  __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i step = _mm256_set1_epi32(8);
  __m256 nan_acc = _mm256_setzero_ps();
  const std::size_t n8 = n & ~static_cast<std::size_t>(7);
  for (std::size_t i = 0; i < n8; i += 8) {
    __m256 v = load8(x + i);
    nan_acc = _mm256_or_ps(nan_acc, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    if (mask != nullptr) v = _mm256_blendv_ps(neg_inf, v, allowed_lanes(mask, i));
    const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, v, gt);
    best_idx = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(best_idx), _mm256_castsi256_ps(idx), gt));
    idx = _mm256_add_epi32(idx, step);
  }
  alignas(32) float vals[8];
  alignas(32) std::int32_t ids[8];
  _mm256_store_ps(vals, best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(ids), best_idx);
  ArgmaxResult r{-1, kNegInf, _mm256_movemask_ps(nan_acc) != 0};
  for (int l = 0; l < 8; ++l) {
    if (ids[l] < 0) continue;
    if (vals[l] > r.value || (vals[l] == r.value && ids[l] < r.index)) {
      r.value = vals[l];
      r.index = ids[l];
    }
  }
  argmax_range(x, n8, n, mask, r);
  return r;
}

ArgmaxResult argmax_f32(const float* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(x, n, mask);
}
ArgmaxResult argmax_bf16(const std::uint16_t* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(x, n, mask);
}

template <typename T>
bool load_impl(const T* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  const __m256 neg_inf = _mm256_set1_ps(kNegInf);
  __m256 nan_acc = _mm256_setzero_ps();
  const std::size_t n8 = n & ~static_cast<std::size_t>(7);
  for (std::size_t i = 0; i < n8; i += 8) {
    __m256 v = load8(src + i);
    nan_acc = _mm256_or_ps(nan_acc, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    if (mask != nullptr) v = _mm256_blendv_ps(neg_inf, v, allowed_lanes(mask, i));
    _mm256_storeu_ps(dst + i, v);
  }
  const bool nan = load_range(src, n8, n, mask, dst);
  return nan || _mm256_movemask_ps(nan_acc) != 0;
}

bool load_f32(const float* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(src, n, mask, dst);
}
bool load_bf16(const std::uint16_t* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(src, n, mask, dst);
}

float max_f32(const float* x, std::size_t n) {
  __m256 m0 = _mm256_set1_ps(kNegInf);
  __m256 m1 = m0;
  const std::size_t n16 = n & ~static_cast<std::size_t>(15);
  for (std::size_t i = 0; i < n16; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
  float m = kNegInf;
  for (float v : lanes) m = v > m ? v : m;
  for (std::size_t i = n16; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// Range reduction and polynomial of expc::exp_f32: returns y with
// e^x = y * 2^fx.
struct Reduced {
  __m256 y;
  __m256 fx;
};
inline Reduced exp8_core(__m256 x) {
  using namespace expc;
  const __m256 fx = _mm256_floor_ps(
      _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(kC1)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(fx, _mm256_set1_ps(kC2)));
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_set1_ps(kP0);
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP1));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP2));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP3));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP4));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(kP5));
  y = _mm256_add_ps(_mm256_mul_ps(y, z), r);
  return {_mm256_add_ps(y, _mm256_set1_ps(1.0f)), fx};
}

inline __m256 pow2(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// Every lane in [kFastLo, kHi]: the result is normal or rounds once into the
// subnormals, so one 2^n scale gives the same bits as the split scale.
inline constexpr float kFastLo = -87.0f;
inline __m256 exp8_fast(__m256 x) {
  const Reduced c = exp8_core(x);
  return _mm256_mul_ps(c.y, pow2(_mm256_cvttps_epi32(c.fx)));
}

// Any input: clamp, then a split 2^n1 * 2^n2 scale, zero below kLo.
inline __m256 exp8_full(__m256 x) {
  using namespace expc;
  const __m256 lo = _mm256_set1_ps(kLo);
  const __m256 zero_lanes = _mm256_cmp_ps(x, lo, _CMP_NGE_UQ);  // !(x >= lo)
  x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(kHi));
  const Reduced c = exp8_core(x);
  const __m256i n = _mm256_cvttps_epi32(c.fx);
  const __m256i n1 = _mm256_srai_epi32(n, 1);
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(c.y, pow2(n1)), pow2(_mm256_sub_epi32(n, n1)));
  return _mm256_andnot_ps(zero_lanes, y);
}

// The fast path only where every lane is in [kFastLo, kHi]; above kHi the
// scalar exp clamps, so those lanes need the full path too.
inline __m256 exp8(__m256 x) {
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(kFastLo), _CMP_NGE_UQ);
  const __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(expc::kHi), _CMP_GT_OQ);
  return _mm256_movemask_ps(_mm256_or_ps(low, high)) == 0 ? exp8_fast(x) : exp8_full(x);
}

ExpResult exp_weights(const float* x, std::size_t n, const ExpParams& p, float* e_out,
                      double* block_sums) {
  ExpResult out;
  LaneAcc acc;
  const __m256 scale = _mm256_set1_ps(p.scale);
  const __m256 shift = _mm256_set1_ps(p.shift);
  const bool ladder = p.ladder != nullptr;
  __m256 tau[kLadderLevels];
  for (int j = 0; j < kLadderLevels; ++j) tau[j] = _mm256_set1_ps(ladder ? p.ladder[j] : 0.0f);

  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    const std::size_t end8 = base + ((end - base) & ~static_cast<std::size_t>(7));
    __m256d sum_lo = _mm256_setzero_pd();
    __m256d sum_hi = _mm256_setzero_pd();
    __m256i count[kLadderLevels];
    for (auto& c : count) c = _mm256_setzero_si256();
    for (std::size_t i = base; i < end8; i += 8) {
      const __m256 t = _mm256_mul_ps(_mm256_loadu_ps(x + i), scale);
      const __m256 e = exp8(_mm256_sub_ps(t, shift));
      if (e_out != nullptr) _mm256_storeu_ps(e_out + i, e);
      sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
      sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
      if (ladder) {
        for (int j = 0; j < kLadderLevels; ++j) {  // lanes count down by one per hit
          const __m256 ge = _mm256_cmp_ps(e, tau[j], _CMP_GE_OQ);
          count[j] = _mm256_sub_epi32(count[j], _mm256_castps_si256(ge));
        }
      }
    }
    _mm256_storeu_pd(acc.sum.data(), sum_lo);
    _mm256_storeu_pd(acc.sum.data() + 4, sum_hi);
    for (int j = 0; j < kLadderLevels; ++j) {
      alignas(32) std::int32_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), count[j]);
      acc.count[j] = 0;
      for (std::int32_t c : lanes) acc.count[j] += c;
    }
    for (std::size_t i = end8; i < end; ++i) {  // tail of the last block
      const float e = expc::exp_f32(x[i] * p.scale - p.shift);
      if (e_out != nullptr) e_out[i] = e;
      const std::size_t lane = (i - base) & 7U;
      acc.sum[lane] += static_cast<double>(e);
      for (int j = 0; ladder && j < kLadderLevels; ++j) {
        if (e >= p.ladder[j]) ++acc.count[j];
      }
    }
    flush_block(acc, out, block_sums, block);
  }
  return out;
}

std::size_t indices_ge(const float* x, std::size_t n, float threshold, std::int32_t* out) {
  const __m256 thr = _mm256_set1_ps(threshold);
  std::size_t k = 0;
  const std::size_t n32 = n & ~static_cast<std::size_t>(31);
  for (std::size_t i = 0; i < n32; i += 32) {
    const auto m0 = static_cast<std::uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), thr, _CMP_GE_OQ)));
    const auto m1 = static_cast<std::uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i + 8), thr, _CMP_GE_OQ)));
    const auto m2 = static_cast<std::uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i + 16), thr, _CMP_GE_OQ)));
    const auto m3 = static_cast<std::uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i + 24), thr, _CMP_GE_OQ)));
    std::uint32_t bits = m0 | (m1 << 8) | (m2 << 16) | (m3 << 24);
    while (bits != 0) {
      out[k++] = static_cast<std::int32_t>(i + static_cast<std::size_t>(__builtin_ctz(bits)));
      bits &= bits - 1;
    }
  }
  return indices_ge_range(x, n32, n, threshold, out, k);
}

std::size_t band_split(const float* e, std::size_t n, float lo, float hi, double* mass_above,
                       double* block_sums, std::int32_t* out) {
  ExpResult mass;
  LaneAcc acc;
  std::size_t k = 0;
  const __m256 vlo = _mm256_set1_ps(lo);
  const __m256 vhi = _mm256_set1_ps(hi);
  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    const std::size_t end8 = base + ((end - base) & ~static_cast<std::size_t>(7));
    __m256d sum_lo = _mm256_setzero_pd();
    __m256d sum_hi = _mm256_setzero_pd();
    for (std::size_t i = base; i < end8; i += 8) {
      const __m256 v = _mm256_loadu_ps(e + i);
      const __m256 above = _mm256_and_ps(v, _mm256_cmp_ps(v, vhi, _CMP_GT_OQ));  // +0.0 elsewhere
      sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(above)));
      sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(above, 1)));
      auto bits = static_cast<std::uint32_t>(_mm256_movemask_ps(
          _mm256_and_ps(_mm256_cmp_ps(v, vlo, _CMP_GE_OQ), _mm256_cmp_ps(v, vhi, _CMP_LE_OQ))));
      while (bits != 0) {
        out[k++] = static_cast<std::int32_t>(i + static_cast<std::size_t>(__builtin_ctz(bits)));
        bits &= bits - 1;
      }
    }
    _mm256_storeu_pd(acc.sum.data(), sum_lo);
    _mm256_storeu_pd(acc.sum.data() + 4, sum_hi);
    band_split_range(e, end8, end, lo, hi, acc, out, k);  // tail of the last block
    flush_block(acc, mass, block_sums, block);
  }
  *mass_above = mass.total;
  return k;
}

}  // namespace

const Kernels* avx2_kernels_table() noexcept {
  static const Kernels k{"avx2",  argmax_f32,  argmax_bf16, load_f32,  load_bf16,
                         max_f32, exp_weights, indices_ge,  band_split};
  return &k;
}

}  // namespace nextok::cpu
