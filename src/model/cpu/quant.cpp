// Scalar reference kernels, the ISA dispatch and dequantization. The scalar
// kernels spell out, lane by lane, what the AVX2 ones do (see quant_impl.hpp),
// with std::fma standing in for vfmadd so both round identically.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "model/cpu/quant_impl.hpp"

#if defined(NEXTOK_HAVE_QUANT_AVX2)
#include <cpuid.h>
#endif

namespace nextok::model {
namespace quant {
namespace {

inline float h2f(std::uint16_t h) noexcept {
  return fp16_bits_to_f32(h);
}

// One Q8 block: per-block absmax scale, values rounded half to even after a
// multiply by 127/amax (not 1/d: that is what ggml's x86 path computes).
// Returns the unrounded scale and writes the wrapped int32 sum of the values.
float quantize_block(const float* x, std::int8_t* qs, std::int32_t* sum) noexcept {
  float amax = 0.0f;
  for (std::size_t j = 0; j < kQK; ++j) {
    const float a = std::fabs(x[j]);
    amax = a > amax ? a : amax;
  }
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  std::uint32_t s = 0;  // wraps like the vector add
  for (std::size_t j = 0; j < kQK; ++j) {
    const std::int32_t v = to_i32(round_half_even(x[j] * id));
    s += static_cast<std::uint32_t>(v);
    qs[j] = saturate_i8(v);
  }
  *sum = static_cast<std::int32_t>(s);
  return d;
}

void quantize_q8_0(const float* x, BlockQ8_0* y, std::size_t n) {
  for (std::size_t b = 0; b < n / kQK; ++b) {
    std::int32_t sum = 0;
    y[b].d = f32_to_fp16_bits(quantize_block(x + b * kQK, y[b].qs, &sum));
  }
}

void quantize_q8_1(const float* x, BlockQ8_1* y, std::size_t n) {
  for (std::size_t b = 0; b < n / kQK; ++b) {
    std::int32_t sum = 0;
    const float d = quantize_block(x + b * kQK, y[b].qs, &sum);
    y[b].d = f32_to_fp16_bits(d);
    y[b].s = f32_to_fp16_bits(d * static_cast<float>(sum));  // integer sum, as ggml's AVX2 path
  }
}

// The 32 values of a Q4 block, in element order (low nibbles first).
inline void unpack_nibbles(const std::uint8_t* qs, int offset, int* q) noexcept {
  for (std::size_t j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0x0F) - offset;
    q[j + 16] = (qs[j] >> 4) - offset;
  }
}

// Lane l of a block covers elements 4l .. 4l+3 (the order of vpmaddubsw +
// vpmaddwd on the unpacked bytes); lane sums are exact integers.
inline void accumulate_lanes(float d, const int* w, const std::int8_t* x, float* acc) noexcept {
  for (std::size_t l = 0; l < 8; ++l) {
    const std::size_t j = 4 * l;
    const int s = w[j] * x[j] + w[j + 1] * x[j + 1] + w[j + 2] * x[j + 2] + w[j + 3] * x[j + 3];
    acc[l] = std::fma(d, static_cast<float>(s), acc[l]);
  }
}

float dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) {
  float acc[8] = {};
  int q[kQK];
  for (std::size_t b = 0; b < n / kQK; ++b) {
    unpack_nibbles(w[b].qs, 8, q);
    accumulate_lanes(h2f(w[b].d) * h2f(x[b].d), q, x[b].qs, acc);
  }
  return hsum8(acc);
}

float dot_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x) {
  float acc[8] = {};
  float summs = 0.0f;
  int q[kQK];
  for (std::size_t b = 0; b < n / kQK; ++b) {
    // ggml writes summs += m * s (contracted to an FMA on x86; the fp16
    // product is exact in fp32, so fused or not gives the same float).
    summs = std::fma(h2f(w[b].m), h2f(x[b].s), summs);
    unpack_nibbles(w[b].qs, 0, q);
    accumulate_lanes(h2f(w[b].d) * h2f(x[b].d), q, x[b].qs, acc);
  }
  return hsum8(acc) + summs;
}

float dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) {
  float acc[8] = {};
  int q[kQK];
  for (std::size_t b = 0; b < n / kQK; ++b) {
    for (std::size_t j = 0; j < kQK; ++j) q[j] = w[b].qs[j];
    accumulate_lanes(h2f(w[b].d) * h2f(x[b].d), q, x[b].qs, acc);
  }
  return hsum8(acc);
}

// ggml's F16/F32 dot: four 8-lane accumulators over 32-element steps, folded
// (0+2)+(1+3), then halves and two horizontal adds.
template <typename T, typename Load>
float reduce32(const T* w, const T* x, std::size_t np, Load load) {
  float acc[32] = {};
  for (std::size_t i = 0; i < np; i += 32) {
    for (std::size_t j = 0; j < 32; ++j) acc[j] = std::fma(load(w[i + j]), load(x[i + j]), acc[j]);
  }
  float v[8];
  for (std::size_t l = 0; l < 8; ++l) v[l] = (acc[l] + acc[16 + l]) + (acc[8 + l] + acc[24 + l]);
  const float t0 = v[0] + v[4], t1 = v[1] + v[5], t2 = v[2] + v[6], t3 = v[3] + v[7];
  return (t0 + t1) + (t2 + t3);
}

float dot_f16_f16(std::size_t n, const std::uint16_t* w, const std::uint16_t* x) {
  const std::size_t np = n & ~std::size_t{31};
  double sum = reduce32(w, x, np, h2f);
  for (std::size_t i = np; i < n; ++i) sum += static_cast<double>(h2f(w[i]) * h2f(x[i]));
  return static_cast<float>(sum);
}

float dot_f32_f32(std::size_t n, const float* w, const float* x) {
  const std::size_t np = n & ~std::size_t{31};
  float sum = reduce32(w, x, np, [](float v) { return v; });
  for (std::size_t i = np; i < n; ++i) sum = std::fma(w[i], x[i], sum);
  return sum;
}

void dotm_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x, std::size_t stride,
                    std::size_t m, float* out) {
  for (std::size_t i = 0; i < m; ++i) out[i] = (dot_q4_1_q8_1)(n, w, x + i * stride);  // (): no ADL
}

void dotm_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t stride,
                    std::size_t m, float* out) {
  for (std::size_t i = 0; i < m; ++i) out[i] = (dot_q8_0_q8_0)(n, w, x + i * stride);  // (): no ADL
}

constexpr Kernels kScalar{"scalar",      quantize_q8_0, quantize_q8_1,  dot_q4_0_q8_0,
                          dot_q4_1_q8_1, dot_q8_0_q8_0, dotm_q4_1_q8_1, dotm_q8_0_q8_0,
                          dot_f16_f16,   dot_f32_f32};

}  // namespace

const Kernels& scalar_kernels() noexcept {
  return kScalar;
}

#if defined(NEXTOK_HAVE_QUANT_AVX2)
// CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports has no "f16c").
static bool has_f16c() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
}
#endif

const Kernels* avx2_kernels() noexcept {
#if defined(NEXTOK_HAVE_QUANT_AVX2)
  static const bool supported =
      __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0 && has_f16c();
  return supported ? avx2_kernels_table() : nullptr;
#else
  return nullptr;
#endif
}

const Kernels& active_kernels() noexcept {
  static const Kernels* chosen = [] {
    const char* force = std::getenv("NEXTOK_FORCE_ISA");
    if (force != nullptr && std::strcmp(force, "scalar") == 0) return &kScalar;
    const Kernels* avx2 = avx2_kernels();
    return avx2 != nullptr ? avx2 : &kScalar;
  }();
  return *chosen;
}

}  // namespace quant

float fp16_to_f32(std::uint16_t h) noexcept {
  return quant::fp16_bits_to_f32(h);
}
std::uint16_t f32_to_fp16(float f) noexcept {
  return quant::f32_to_fp16_bits(f);
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, std::size_t n) noexcept {
  quant::active_kernels().quantize_q8_0(x, y, n);
}
void quantize_row_q8_1(const float* x, BlockQ8_1* y, std::size_t n) noexcept {
  quant::active_kernels().quantize_q8_1(x, y, n);
}
float dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) noexcept {
  return quant::active_kernels().dot_q4_0_q8_0(n, w, x);
}
void dotm_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x, std::size_t stride,
                    std::size_t m, float* out) noexcept {
  quant::active_kernels().dotm_q4_1_q8_1(n, w, x, stride, m, out);
}
void dotm_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t stride,
                    std::size_t m, float* out) noexcept {
  quant::active_kernels().dotm_q8_0_q8_0(n, w, x, stride, m, out);
}
float dot_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x) noexcept {
  return quant::active_kernels().dot_q4_1_q8_1(n, w, x);
}
float dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) noexcept {
  return quant::active_kernels().dot_q8_0_q8_0(n, w, x);
}
float dot_f16_f16(std::size_t n, const std::uint16_t* w, const std::uint16_t* x) noexcept {
  return quant::active_kernels().dot_f16_f16(n, w, x);
}
float dot_f32_f32(std::size_t n, const float* w, const float* x) noexcept {
  return quant::active_kernels().dot_f32_f32(n, w, x);
}

// Same arithmetic as ggml's dequantize_row_* (built without FMA): q*d, then +m.
bool dequantize_row(std::uint32_t ggml_type, const void* src, float* dst, std::size_t n) noexcept {
  using quant::fp16_bits_to_f32;
  switch (ggml_type) {
    case 0:  // F32
      std::memcpy(dst, src, n * sizeof(float));
      return true;
    case 1: {  // F16
      const auto* h = static_cast<const std::uint16_t*>(src);
      for (std::size_t i = 0; i < n; ++i) dst[i] = fp16_bits_to_f32(h[i]);
      return true;
    }
    case 2: {  // Q4_0
      if (n % kQK != 0) return false;
      const auto* b = static_cast<const BlockQ4_0*>(src);
      for (std::size_t i = 0; i < n / kQK; ++i, dst += kQK) {
        const float d = fp16_bits_to_f32(b[i].d);
        int q[kQK];
        quant::unpack_nibbles(b[i].qs, 8, q);
        for (std::size_t j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q[j]) * d;
      }
      return true;
    }
    case 3: {  // Q4_1
      if (n % kQK != 0) return false;
      const auto* b = static_cast<const BlockQ4_1*>(src);
      for (std::size_t i = 0; i < n / kQK; ++i, dst += kQK) {
        const float d = fp16_bits_to_f32(b[i].d), m = fp16_bits_to_f32(b[i].m);
        int q[kQK];
        quant::unpack_nibbles(b[i].qs, 0, q);
        for (std::size_t j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q[j]) * d + m;
      }
      return true;
    }
    case 8: {  // Q8_0
      if (n % kQK != 0) return false;
      const auto* b = static_cast<const BlockQ8_0*>(src);
      for (std::size_t i = 0; i < n / kQK; ++i, dst += kQK) {
        const float d = fp16_bits_to_f32(b[i].d);
        for (std::size_t j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace nextok::model
