// AVX-512 kernels (F, BW, VL, DQ). Compiled with those flags and only called
// after a CPU check. Every function gives the bits of kernels_scalar.cpp: the
// same float operations in the same order. Tails run as one masked 16-lane
// step instead of a scalar loop; lanes past the end load as 0 (or -Inf) and
// are masked out of every result.
// GCC 12's AVX-512 headers build their "undefined" pass-through operands from
// self-initialised locals, which -O2 reports as uninitialised inside the
// intrinsics; the warning is about the header, not this file's values.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // clang has no such warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>
#include <limits>

#include "backend/cpu/exp_f32.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/lane_sums.hpp"
#include "backend/cpu/scalar_loops.hpp"

namespace nextok::cpu {
namespace {

constexpr __mmask16 kAll = 0xFFFF;

// Lanes 0 .. left-1 (all 16 when left >= 16).
inline __mmask16 live_lanes(std::size_t left) {
  return left >= 16 ? kAll : static_cast<__mmask16>((1U << left) - 1U);
}

// The token mask's bits for tokens i .. i+15 (i a multiple of 16).
inline __mmask16 allowed_lanes(const std::uint32_t* mask, std::size_t i) {
  return static_cast<__mmask16>(mask[i / 32] >> (i % 32));
}

inline __m512 load16(const float* x, __mmask16 live) {
  return _mm512_maskz_loadu_ps(live, x);
}
inline __m512 load16(const std::uint16_t* x, __mmask16 live) {
  const __m256i h = _mm256_maskz_loadu_epi16(live, x);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

inline __mmask16 nan_lanes(__m512 v) {
  return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
}

inline __m512i iota16(std::size_t i) {
  return _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i)),
                          _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

// Per-lane running maximum and its index; ties keep the earlier index.
struct Best {
  __m512 value = _mm512_set1_ps(kNegInf);
  __m512i index = _mm512_set1_epi32(-1);
};

template <typename T>
inline __mmask16 fold16(Best& b, const T* x, std::size_t i, __mmask16 live,
                        const std::uint32_t* mask) {
  const __m512 v = load16(x + i, live);
  const __mmask16 ok = mask != nullptr ? _kand_mask16(live, allowed_lanes(mask, i)) : live;
  const __mmask16 gt = _mm512_mask_cmp_ps_mask(ok, v, b.value, _CMP_GT_OQ);
  b.value = _mm512_mask_mov_ps(b.value, gt, v);
  b.index = _mm512_mask_mov_epi32(b.index, gt, iota16(i));
  return nan_lanes(v);  // lanes past the end loaded 0
}

// The first index of the greatest allowed non-NaN value: whichever lane holds
// it, the result does not depend on how elements were spread over lanes.
inline void reduce_best(const Best& b, ArgmaxResult& r) {
  alignas(64) float vals[16];
  alignas(64) std::int32_t ids[16];
  _mm512_store_ps(vals, b.value);
  _mm512_store_si512(ids, b.index);
  for (int l = 0; l < 16; ++l) {
    if (ids[l] < 0) continue;
    if (vals[l] > r.value || (vals[l] == r.value && ids[l] < r.index)) {
      r.value = vals[l];
      r.index = ids[l];
    }
  }
}

template <typename T>
ArgmaxResult argmax_impl(const T* x, std::size_t n, const std::uint32_t* mask) {
  Best b0;
  Best b1;  // two chains, so the compare-select latency overlaps
  __mmask16 nan = 0;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    nan = _kor_mask16(nan, fold16(b0, x, i, kAll, mask));
    nan = _kor_mask16(nan, fold16(b1, x, i + 16, kAll, mask));
  }
  for (; i < n; i += 16) nan = _kor_mask16(nan, fold16(b0, x, i, live_lanes(n - i), mask));
  ArgmaxResult r{-1, kNegInf, nan != 0};
  reduce_best(b0, r);
  reduce_best(b1, r);
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
  const __m512 neg_inf = _mm512_set1_ps(kNegInf);
  __mmask16 nan = 0;
  for (std::size_t i = 0; i < n; i += 16) {
    const __mmask16 live = live_lanes(n - i);
    __m512 v = load16(src + i, live);
    nan = _kor_mask16(nan, nan_lanes(v));
    if (mask != nullptr) v = _mm512_mask_mov_ps(neg_inf, allowed_lanes(mask, i), v);
    _mm512_mask_storeu_ps(dst + i, live, v);
  }
  return nan != 0;
}

bool load_f32(const float* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(src, n, mask, dst);
}
bool load_bf16(const std::uint16_t* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(src, n, mask, dst);
}

// As in the AVX2 kernel, only the sign of a zero maximum can depend on the
// lane order (-0 == +0); every other result is the scalar one.
float max_f32(const float* x, std::size_t n) {
  const __m512 neg_inf = _mm512_set1_ps(kNegInf);
  __m512 m0 = neg_inf;
  __m512 m1 = neg_inf;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
  }
  for (; i < n; i += 16)
    m0 = _mm512_max_ps(m0, _mm512_mask_loadu_ps(neg_inf, live_lanes(n - i), x + i));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_max_ps(m0, m1));
  float m = kNegInf;
  for (float v : lanes) m = v > m ? v : m;
  return m;
}

// Range reduction and polynomial of expc::exp_f32: e^x = y * 2^fx.
struct Reduced {
  __m512 y;
  __m512 fx;
};
inline Reduced exp16_core(__m512 x) {
  using namespace expc;
  const __m512 fx = _mm512_roundscale_ps(
      _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _mm512_set1_ps(0.5f)),
      _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(fx, _mm512_set1_ps(kC1)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(fx, _mm512_set1_ps(kC2)));
  const __m512 z = _mm512_mul_ps(r, r);
  __m512 y = _mm512_set1_ps(kP0);
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP1));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP2));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP3));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP4));
  y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(kP5));
  y = _mm512_add_ps(_mm512_mul_ps(y, z), r);
  return {_mm512_add_ps(y, _mm512_set1_ps(1.0f)), fx};
}

inline __m512 pow2(__m512i n) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23));
}

// Every lane in [kFastLo, kHi]: the result is normal or rounds once into the
// subnormals, so one 2^n scale gives the same bits as the split scale. Here n
// lies in [-126, 127], so 2^n is a normal float and y * 2^n (one rounding) is
// what vscalefps computes from y and fx directly.
inline constexpr float kFastLo = -87.0f;
inline __m512 exp16_fast(__m512 x) {
  const Reduced c = exp16_core(x);
  return _mm512_scalef_ps(c.y, c.fx);
}

// Any input: clamp, then a split 2^n1 * 2^n2 scale, zero below kLo and for NaN.
inline __m512 exp16_full(__m512 x) {
  using namespace expc;
  const __m512 lo = _mm512_set1_ps(kLo);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(kHi));
  const Reduced c = exp16_core(x);
  const __m512i n = _mm512_cvttps_epi32(c.fx);
  const __m512i n1 = _mm512_srai_epi32(n, 1);
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(c.y, pow2(n1)), pow2(_mm512_sub_epi32(n, n1)));
  return _mm512_maskz_mov_ps(keep, y);
}

// e^x on the live lanes (others 0).
inline __m512 exp16(__m512 x, __mmask16 live) {
  const __mmask16 in_range = _mm512_mask_cmp_ps_mask(live, x, _mm512_set1_ps(kFastLo), _CMP_GE_OQ);
  const __mmask16 fast =
      _mm512_mask_cmp_ps_mask(in_range, x, _mm512_set1_ps(expc::kHi), _CMP_LE_OQ);
  const __m512 e = fast == live ? exp16_fast(x) : exp16_full(x);
  return _mm512_maskz_mov_ps(live, e);
}

inline __m512d widen_lo(__m512 v) {
  return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}
inline __m512d widen_hi(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

ExpResult exp_weights(const float* x, std::size_t n, const ExpParams& p, float* e_out,
                      double* block_sums) {
  ExpResult out;
  LaneAcc acc;
  const __m512 scale = _mm512_set1_ps(p.scale);
  const __m512 shift = _mm512_set1_ps(p.shift);
  const bool ladder = p.ladder != nullptr;
  __m512 tau[kLadderLevels];
  for (int j = 0; j < kLadderLevels; ++j) tau[j] = _mm512_set1_ps(ladder ? p.ladder[j] : 0.0f);

  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    // Lane l holds the block's double lane l: elements i+l, then i+8+l, in
    // element order. Masked-out tail lanes add +0.0, which changes no sum.
    __m512d sum = _mm512_setzero_pd();
    __m512i count[kLadderLevels];  // per-lane hits, at most 64 per block
    for (auto& c : count) c = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1);
    for (std::size_t i = base; i < end; i += 16) {
      const __mmask16 live = live_lanes(end - i);
      const __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, x + i), scale);
      const __m512 e = exp16(_mm512_sub_ps(t, shift), live);
      if (e_out != nullptr) _mm512_mask_storeu_ps(e_out + i, live, e);
      sum = _mm512_add_pd(sum, widen_lo(e));
      sum = _mm512_add_pd(sum, widen_hi(e));
      if (ladder) {
        for (int j = 0; j < kLadderLevels; ++j) {
          const __mmask16 ge = _mm512_mask_cmp_ps_mask(live, e, tau[j], _CMP_GE_OQ);
          count[j] = _mm512_mask_add_epi32(count[j], ge, count[j], one);
        }
      }
    }
    _mm512_storeu_pd(acc.sum.data(), sum);
    for (int j = 0; j < kLadderLevels; ++j) acc.count[j] = _mm512_reduce_add_epi32(count[j]);
    flush_block(acc, out, block_sums, block);
  }
  return out;
}

std::size_t indices_ge(const float* x, std::size_t n, float threshold, std::int32_t* out) {
  const __m512 thr = _mm512_set1_ps(threshold);
  std::size_t k = 0;
  auto emit = [&](std::size_t i, std::uint64_t bits) {
    while (bits != 0) {
      out[k++] = static_cast<std::int32_t>(i + static_cast<std::size_t>(__builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  };
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    std::uint64_t bits = 0;
    for (unsigned q = 0; q < 4; ++q) {
      const __mmask16 ge = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i + 16 * q), thr, _CMP_GE_OQ);
      bits |= static_cast<std::uint64_t>(ge) << (16 * q);
    }
    emit(i, bits);
  }
  for (; i < n; i += 16) {
    const __mmask16 live = live_lanes(n - i);
    emit(i, _mm512_mask_cmp_ps_mask(live, _mm512_maskz_loadu_ps(live, x + i), thr, _CMP_GE_OQ));
  }
  return k;
}

std::size_t band_split(const float* e, std::size_t n, float lo, float hi, double* mass_above,
                       double* block_sums, std::int32_t* out) {
  ExpResult mass;
  LaneAcc acc;
  std::size_t k = 0;
  const __m512 vlo = _mm512_set1_ps(lo);
  const __m512 vhi = _mm512_set1_ps(hi);
  const __m512i step = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    __m512d sum = _mm512_setzero_pd();
    for (std::size_t i = base; i < end; i += 16) {
      const __mmask16 live = live_lanes(end - i);
      const __m512 v = _mm512_maskz_loadu_ps(live, e + i);
      const __m512 above = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, vhi, _CMP_GT_OQ), v);
      sum = _mm512_add_pd(sum, widen_lo(above));
      sum = _mm512_add_pd(sum, widen_hi(above));
      const __mmask16 band = _mm512_mask_cmp_ps_mask(
          _mm512_mask_cmp_ps_mask(live, v, vlo, _CMP_GE_OQ), v, vhi, _CMP_LE_OQ);
      const __m512i ids = _mm512_add_epi32(_mm512_set1_epi32(static_cast<std::int32_t>(i)), step);
      // A compress into a register and a full store: the compressing store
      // to memory is microcoded on some cores (Zen 4: ~100x slower). k <= i,
      // so 16 lanes fit below n except in the last step.
      if (i + 16 <= n) {
        _mm512_storeu_si512(out + k, _mm512_maskz_compress_epi32(band, ids));
      } else {
        _mm512_mask_compressstoreu_epi32(out + k, band, ids);
      }
      k += static_cast<std::size_t>(__builtin_popcount(band));
    }
    _mm512_storeu_pd(acc.sum.data(), sum);
    flush_block(acc, mass, block_sums, block);
  }
  *mass_above = mass.total;
  return k;
}

}  // namespace

const Kernels* avx512_kernels_table() noexcept {
  static const Kernels k{"avx512", argmax_f32,  argmax_bf16, load_f32,  load_bf16,
                         max_f32,  exp_weights, indices_ge,  band_split};
  return &k;
}

}  // namespace nextok::cpu

#pragma GCC diagnostic pop
