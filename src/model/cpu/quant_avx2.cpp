// AVX2 + FMA + F16C kernels. Compiled with -mavx2 -mfma -mf16c and only
// called after a CPU check. Each one has the structure of ggml's x86 AVX2
// path; quant.cpp holds the scalar mirror of every step.
#include <immintrin.h>

#include <cstring>

#include "model/cpu/quant_impl.hpp"

namespace nextok::model::quant {
namespace {

// The F16C instructions on one lane (clang's _cvtsh_ss is a C99 compound
// literal, which -Wpedantic refuses in C++).
inline float h2f(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
inline std::uint16_t f2h(float f) {
  return static_cast<std::uint16_t>(
      _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

inline float hsum(__m256 v) {
  alignas(32) float l[8];
  _mm256_store_ps(l, v);
  return hsum8(l);
}

inline std::int32_t hsum_i32(__m256i v) {
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i t = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  return _mm_cvtsi128_si32(_mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1))));
}

// 32 nibbles to bytes 0..15: low nibbles (elements 0..15) in the low half.
inline __m256i unpack_nibbles(const std::uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// Sums of four adjacent u8*i8 products, as floats (exact: |sum| < 2^15).
inline __m256 dot4_u8_i8(__m256i u, __m256i s) {
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// Signed x signed via |a| * (b with a's sign); a = -128 with b = -128 is the
// only product this gets wrong, and activations never hold -128.
inline __m256 dot4_i8_i8(__m256i a, __m256i b) {
  return dot4_u8_i8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

// Quantizes one block of 32; returns the unrounded scale, *sum the int sum.
inline float quantize_block(const float* x, std::int8_t* qs, std::int32_t* sum) {
  __m256 v[4];
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 amax = _mm256_setzero_ps();
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    amax = _mm256_max_ps(_mm256_and_ps(v[k], abs_mask), amax);
  }
  __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(amax, 1), _mm256_castps256_ps128(amax));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float max_abs = _mm_cvtss_f32(m4);
  const float d = max_abs / 127.0f;
  const __m256 id = _mm256_set1_ps(max_abs != 0.0f ? 127.0f / max_abs : 0.0f);
  __m256i q[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 r =
        _mm256_round_ps(_mm256_mul_ps(v[k], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q[k] = _mm256_cvtps_epi32(r);
  }
  *sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
  // The packs work per 128-bit half; the permute restores element order.
  const __m256i w01 = _mm256_packs_epi32(q[0], q[1]);
  const __m256i w23 = _mm256_packs_epi32(q[2], q[3]);
  const __m256i b = _mm256_packs_epi16(w01, w23);
  const __m256i ordered = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), ordered);
  return d;
}

void quantize_q8_0(const float* x, BlockQ8_0* y, std::size_t n) {
  for (std::size_t b = 0; b < n / kQK; ++b) {
    std::int32_t sum = 0;
    y[b].d = f2h(quantize_block(x + b * kQK, y[b].qs, &sum));
  }
}

void quantize_q8_1(const float* x, BlockQ8_1* y, std::size_t n) {
  for (std::size_t b = 0; b < n / kQK; ++b) {
    std::int32_t sum = 0;
    const float d = quantize_block(x + b * kQK, y[b].qs, &sum);
    y[b].d = f2h(d);
    y[b].s = f2h(d * static_cast<float>(sum));
  }
}

// Weight rows are read once per token, in order, and the hardware prefetcher
// alone left each block waiting on memory (decode at 0.56x llama.cpp per
// thread). Prefetching 2 KiB ahead along the rows (past a row's end is the
// next row) hides that latency: 2.2x decode (docs/model.md). The sums and
// their order are untouched.
constexpr std::size_t kPrefetchBytes = 2048;
template <typename Block>
inline void prefetch_ahead(const Block* p) {
  __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes);
}

inline __m256i load_i8x32(const std::int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

float dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i eight = _mm256_set1_epi8(8);
  for (std::size_t b = 0; b < n / kQK; ++b) {
    prefetch_ahead(w + b);
    const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(x[b].d));
    const __m256i qw = _mm256_sub_epi8(unpack_nibbles(w[b].qs), eight);
    acc = _mm256_fmadd_ps(d, dot4_i8_i8(qw, load_i8x32(x[b].qs)), acc);
  }
  return hsum(acc);
}

float dot_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x) {
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (std::size_t b = 0; b < n / kQK; ++b) {
    prefetch_ahead(w + b);
    const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(x[b].d));
    summs = __builtin_fmaf(h2f(w[b].m), h2f(x[b].s), summs);
    acc = _mm256_fmadd_ps(d, dot4_u8_i8(unpack_nibbles(w[b].qs), load_i8x32(x[b].qs)), acc);
  }
  return hsum(acc) + summs;
}

float dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) {
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n / kQK; ++b) {
    prefetch_ahead(w + b);
    const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(x[b].d));
    acc = _mm256_fmadd_ps(d, dot4_i8_i8(load_i8x32(w[b].qs), load_i8x32(x[b].qs)), acc);
  }
  return hsum(acc);
}

// The single-row dots for m <= kMaxDotRows activation rows, each with exactly its own
// operations and order, sharing the weight loads and the nibble unpacking.
void dotm_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x, std::size_t stride,
                    std::size_t m, float* out) {
  __m256 acc[kMaxDotRows];
  float summs[kMaxDotRows] = {};
  for (std::size_t i = 0; i < m; ++i) acc[i] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n / kQK; ++b) {
    prefetch_ahead(w + b);
    const float wd = h2f(w[b].d), wm = h2f(w[b].m);
    const __m256i qw = unpack_nibbles(w[b].qs);
    for (std::size_t i = 0; i < m; ++i) {
      const BlockQ8_1& xb = x[i * stride + b];
      const __m256 d = _mm256_set1_ps(wd * h2f(xb.d));
      summs[i] = __builtin_fmaf(wm, h2f(xb.s), summs[i]);
      acc[i] = _mm256_fmadd_ps(d, dot4_u8_i8(qw, load_i8x32(xb.qs)), acc[i]);
    }
  }
  for (std::size_t i = 0; i < m; ++i) out[i] = hsum(acc[i]) + summs[i];
}

void dotm_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t stride,
                    std::size_t m, float* out) {
  __m256 acc[kMaxDotRows];
  for (std::size_t i = 0; i < m; ++i) acc[i] = _mm256_setzero_ps();
  for (std::size_t b = 0; b < n / kQK; ++b) {
    prefetch_ahead(w + b);
    const float wd = h2f(w[b].d);
    const __m256i qw = load_i8x32(w[b].qs);
    const __m256i abs_w = _mm256_sign_epi8(qw, qw);
    for (std::size_t i = 0; i < m; ++i) {
      const BlockQ8_0& xb = x[i * stride + b];
      const __m256 d = _mm256_set1_ps(wd * h2f(xb.d));
      const __m256 p = dot4_u8_i8(abs_w, _mm256_sign_epi8(load_i8x32(xb.qs), qw));
      acc[i] = _mm256_fmadd_ps(d, p, acc[i]);
    }
  }
  for (std::size_t i = 0; i < m; ++i) out[i] = hsum(acc[i]);
}

// Four accumulators folded (0+2)+(1+3), halves added, then two hadds.
inline float reduce4(const __m256* acc) {
  const __m256 v = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
  const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t1 = _mm_hadd_ps(t0, t0);
  return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

inline __m256 load_f16x8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

float dot_f16_f16(std::size_t n, const std::uint16_t* w, const std::uint16_t* x) {
  const std::size_t np = n & ~std::size_t{31};
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (std::size_t i = 0; i < np; i += 32) {
    for (std::size_t j = 0; j < 4; ++j) {
      acc[j] = _mm256_fmadd_ps(load_f16x8(w + i + 8 * j), load_f16x8(x + i + 8 * j), acc[j]);
    }
  }
  double sum = reduce4(acc);
  for (std::size_t i = np; i < n; ++i) sum += static_cast<double>(h2f(w[i]) * h2f(x[i]));
  return static_cast<float>(sum);
}

float dot_f32_f32(std::size_t n, const float* w, const float* x) {
  const std::size_t np = n & ~std::size_t{31};
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (std::size_t i = 0; i < np; i += 32) {
    for (std::size_t j = 0; j < 4; ++j) {
      acc[j] =
          _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8 * j), _mm256_loadu_ps(x + i + 8 * j), acc[j]);
    }
  }
  float sum = reduce4(acc);
  for (std::size_t i = np; i < n; ++i) sum = __builtin_fmaf(w[i], x[i], sum);
  return sum;
}

constexpr Kernels kAvx2{"avx2",        quantize_q8_0,  quantize_q8_1,  dot_q4_0_q8_0, dot_q4_1_q8_1,
                        dot_q8_0_q8_0, dotm_q4_1_q8_1, dotm_q8_0_q8_0, dot_f16_f16,   dot_f32_f32};

}  // namespace

const Kernels* avx2_kernels_table() noexcept {
  return &kAvx2;
}

}  // namespace nextok::model::quant
