// AVX2 + FMA + F16C attention loops; the same float operations as the scalar
// versions in ops.cpp, eight lanes at a time.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/cpu/attention_kernels.hpp"

namespace nextok::model {

namespace {

float hsum(__m256 v) {
  __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  t = _mm_add_ps(t, _mm_movehl_ps(t, t));
  t = _mm_add_ss(t, _mm_movehdup_ps(t));
  return _mm_cvtss_f32(t);
}

__m256 load_f16(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Four rows at a time: four independent FMA chains hide the FMA latency
// that one chain per row waits on; each row's sum is unchanged.
void dots_f16_lanes8(std::size_t n, const std::uint16_t* a, std::size_t stride, std::size_t rows,
                     const float* b, float* out) {
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const std::uint16_t* a0 = a + r * stride;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    for (std::size_t i = 0; i < n; i += 8) {
      const __m256 bv = _mm256_loadu_ps(b + i);
      c0 = _mm256_fmadd_ps(load_f16(a0 + i), bv, c0);
      c1 = _mm256_fmadd_ps(load_f16(a0 + stride + i), bv, c1);
      c2 = _mm256_fmadd_ps(load_f16(a0 + 2 * stride + i), bv, c2);
      c3 = _mm256_fmadd_ps(load_f16(a0 + 3 * stride + i), bv, c3);
    }
    out[r] = hsum(c0);
    out[r + 1] = hsum(c1);
    out[r + 2] = hsum(c2);
    out[r + 3] = hsum(c3);
  }
  for (; r < rows; ++r) {
    __m256 c = _mm256_setzero_ps();
    for (std::size_t i = 0; i < n; i += 8)
      c = _mm256_fmadd_ps(load_f16(a + r * stride + i), _mm256_loadu_ps(b + i), c);
    out[r] = hsum(c);
  }
}

// Up to four queries against two key rows at a time (one conversion of
// each key chunk for all of them); more queries in groups of four.
void dots_f16_lanes8_multi(std::size_t n, const std::uint16_t* a, std::size_t stride,
                           std::size_t rows, const float* b, std::size_t nq, float* out,
                           std::size_t out_stride) {
  if (nq == 1) return dots_f16_lanes8(n, a, stride, rows, b, out);
  for (std::size_t q0 = 0; q0 < nq; q0 += 4) {
    const std::size_t m = std::min<std::size_t>(4, nq - q0);
    const float* bq = b + q0 * n;
    float* oq = out + q0 * out_stride;
    std::size_t r = 0;
    for (; r + 2 <= rows; r += 2) {
      const std::uint16_t* a0 = a + r * stride;
      __m256 c0[4], c1[4];
      for (std::size_t q = 0; q < 4; ++q) c0[q] = c1[q] = _mm256_setzero_ps();
      for (std::size_t i = 0; i < n; i += 8) {
        const __m256 k0 = load_f16(a0 + i), k1 = load_f16(a0 + stride + i);
        for (std::size_t q = 0; q < m; ++q) {
          const __m256 bv = _mm256_loadu_ps(bq + q * n + i);
          c0[q] = _mm256_fmadd_ps(k0, bv, c0[q]);
          c1[q] = _mm256_fmadd_ps(k1, bv, c1[q]);
        }
      }
      for (std::size_t q = 0; q < m; ++q) {
        oq[q * out_stride + r] = hsum(c0[q]);
        oq[q * out_stride + r + 1] = hsum(c1[q]);
      }
    }
    for (; r < rows; ++r) {
      for (std::size_t q = 0; q < m; ++q)
        dots_f16_lanes8(n, a + r * stride, stride, 1, bq + q * n, oq + q * out_stride + r);
    }
  }
}

// Per lane and per 64-wide block of the row, the partial sums stay in eight
// registers while j walks that lane's rows; the FMA order per element is
// the scalar one.
void weighted_sum_f16(std::size_t n, const float* w, const std::uint16_t* v, std::size_t stride,
                      std::size_t count, std::size_t lanes, float* acc) {
  constexpr std::size_t kBlock = 64;
  for (std::size_t l = 0; l < lanes; ++l) {
    float* out = acc + l * n;
    std::size_t i0 = 0;
    for (; i0 + kBlock <= n; i0 += kBlock) {
      __m256 c[8];
      for (auto& x : c) x = _mm256_setzero_ps();
      for (std::size_t j = l; j < count; j += lanes) {
        const __m256 wv = _mm256_set1_ps(w[j]);
        const std::uint16_t* vj = v + j * stride + i0;
        for (int k = 0; k < 8; ++k) c[k] = _mm256_fmadd_ps(wv, load_f16(vj + 8 * k), c[k]);
      }
      for (int k = 0; k < 8; ++k) _mm256_storeu_ps(out + i0 + 8 * k, c[k]);
    }
    for (std::size_t i = i0; i < n; i += 8) {
      __m256 c = _mm256_setzero_ps();
      for (std::size_t j = l; j < count; j += lanes)
        c = _mm256_fmadd_ps(_mm256_set1_ps(w[j]), load_f16(v + j * stride + i), c);
      _mm256_storeu_ps(out + i, c);
    }
  }
}

// NQ heads' partial sums over R chunks of 8 (NQ·R registers) from one
// conversion of each value chunk; j walks lane l's rows in order.
template <int NQ, int R>
void weighted_block(const float* w, std::size_t w_stride, const std::uint16_t* v,
                    std::size_t stride, std::size_t count, std::size_t lanes, std::size_t l,
                    std::size_t i0, float* out, std::size_t out_stride) {
  __m256 c[NQ][R];
  for (auto& cq : c)
    for (auto& x : cq) x = _mm256_setzero_ps();
  for (std::size_t j = l; j < count; j += lanes) {
    const std::uint16_t* vj = v + j * stride + i0;
    __m256 vk[R];
    for (int k = 0; k < R; ++k) vk[k] = load_f16(vj + 8 * k);
    for (int q = 0; q < NQ; ++q) {
      const __m256 wv = _mm256_set1_ps(w[static_cast<std::size_t>(q) * w_stride + j]);
      for (int k = 0; k < R; ++k) c[q][k] = _mm256_fmadd_ps(wv, vk[k], c[q][k]);
    }
  }
  for (int q = 0; q < NQ; ++q)
    for (int k = 0; k < R; ++k)
      _mm256_storeu_ps(out + static_cast<std::size_t>(q) * out_stride + i0 + 8 * k, c[q][k]);
}

template <int NQ>
void weighted_multi(std::size_t n, const float* w, std::size_t w_stride, const std::uint16_t* v,
                    std::size_t stride, std::size_t count, std::size_t lanes, float* acc) {
  constexpr int R = NQ <= 3 ? 4 : NQ <= 6 ? 2 : 1;
  for (std::size_t l = 0; l < lanes; ++l) {
    float* out = acc + l * n;
    std::size_t i0 = 0;
    for (; i0 + 8 * R <= n; i0 += 8 * R)
      weighted_block<NQ, R>(w, w_stride, v, stride, count, lanes, l, i0, out, lanes * n);
    for (; i0 < n; i0 += 8)
      weighted_block<NQ, 1>(w, w_stride, v, stride, count, lanes, l, i0, out, lanes * n);
  }
}

// exp_ggml on eight lanes (see ops.cpp for the algorithm).
__m256 exp8(__m256 x) {
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
  const __m256 n = _mm256_sub_ps(z, shift);
  const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                    _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
  const __m256 k =
      _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 big = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
  const __m256 normal = _mm256_fmadd_ps(j, k, k);
  if (_mm256_movemask_ps(big) == 0) return normal;
  const __m256i g =
      _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                       _mm256_set1_epi32(static_cast<int>(0x82000000u)));
  const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
  const __m256 huge = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
  const __m256 scaled = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
  return _mm256_blendv_ps(_mm256_blendv_ps(normal, scaled, big), _mm256_mul_ps(s1, s1), huge);
}

double exp_sum(float* x, std::size_t n, float max) {
  double sum = 0.0;
  const __m256 m = _mm256_set1_ps(max);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    _mm256_storeu_ps(x + i, v);
    sum += static_cast<double>(hsum(v));
  }
  if (i < n) {
    alignas(32) float tail[8];
    for (std::size_t l = 0; l < 8; ++l) tail[l] = i + l < n ? x[i + l] - max : -INFINITY;
    const __m256 v = exp8(_mm256_load_ps(tail));
    _mm256_store_ps(tail, v);
    for (std::size_t l = 0; i + l < n; ++l) x[i + l] = tail[l];
    sum += static_cast<double>(hsum(v));
  }
  return sum;
}

void round_f16(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) {
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(x[i]), _MM_FROUND_TO_NEAREST_INT);
    x[i] = _mm_cvtss_f32(_mm_cvtph_ps(h));
  }
}

void swiglu(float* gate, const float* up, std::size_t n) {
  std::size_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    alignas(32) float lane[8] = {0.0f - gate[i]};
    _mm256_store_ps(lane, exp8(_mm256_load_ps(lane)));
    gate[i] = gate[i] / (1.0f + lane[0]) * up[i];
  }
}

void weighted_sum_f16_multi(std::size_t n, const float* w, std::size_t w_stride, std::size_t nq,
                            const std::uint16_t* v, std::size_t stride, std::size_t count,
                            std::size_t lanes, float* acc) {
  for (std::size_t q0 = 0; q0 < nq;) {
    const std::size_t m = std::min<std::size_t>(8, nq - q0);
    const float* wq = w + q0 * w_stride;
    float* aq = acc + q0 * lanes * n;
    using Multi = void (*)(std::size_t, const float*, std::size_t, const std::uint16_t*,
                           std::size_t, std::size_t, std::size_t, float*);
    static constexpr Multi kMulti[] = {weighted_multi<2>, weighted_multi<3>, weighted_multi<4>,
                                       weighted_multi<5>, weighted_multi<6>, weighted_multi<7>,
                                       weighted_multi<8>};
    if (m == 1) {
      weighted_sum_f16(n, wq, v, stride, count, lanes, aq);
    } else {
      kMulti[m - 2](n, wq, w_stride, v, stride, count, lanes, aq);
    }
    q0 += m;
  }
}

constexpr AttentionKernels kAvx2{dots_f16_lanes8,
                                 dots_f16_lanes8_multi,
                                 weighted_sum_f16,
                                 weighted_sum_f16_multi,
                                 exp_sum,
                                 round_f16,
                                 swiglu};

}  // namespace

const AttentionKernels* attention_kernels_avx2() noexcept {
  return &kAvx2;
}

}  // namespace nextok::model
