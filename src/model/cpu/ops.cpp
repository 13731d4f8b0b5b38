#include "model/cpu/ops.hpp"

#include "model/cpu/attention_kernels.hpp"
#include "model/cpu/quant.hpp"
#include "model/cpu/quant_impl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace nextok::model {

void rms_norm(const float* x, const float* w, float* y, std::size_t n, float eps) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (std::size_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
}

void rope(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t dims,
          std::size_t position, float freq_base) noexcept {
  const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(dims));
  float cache[2 * 512];
  float theta = static_cast<float>(position);
  for (std::size_t i = 0; i < dims && i < 1024; i += 2) {
    cache[i] = std::cos(theta);
    cache[i + 1] = std::sin(theta);
    theta *= theta_scale;
  }
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (std::size_t i = 0; i < dims; i += 2) {
      const float c = cache[i], s = cache[i + 1];
      const float x0 = v[i], x1 = v[i + 1];
      // As llama.cpp's compiled rope: the first product fused into an FMA.
      v[i] = std::fma(x0, c, -(x1 * s));
      v[i + 1] = std::fma(x0, s, x1 * c);
    }
  }
}

namespace {

std::uint32_t bits(float f) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(std::uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

float exp_ggml(float x) noexcept {
  // x = n·ln2 + b with n rounded by the 1.5·2^23 shift; e^b by a degree-5
  // polynomial; 2^n through the exponent bits (split in two when |n| > 126).
  const float shift = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shift);
  const float n = z - shift;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const std::uint32_t e = bits(z) << 23;
  const float k = from_bits(e + bits(1.0f));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, 0x1.ffffecp-1f * b);
  if (!(std::fabs(n) > 126.0f)) return std::fma(j, k, k);
  const std::uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
  const float s1 = from_bits(g + 0x7f000000u);
  const float s2 = from_bits(e - g);
  if (std::fabs(n) > 192.0f) return s1 * s1;
  return std::fma(s2, j, s2) * s1;
}

void softmax(float* x, std::size_t n, float scale) noexcept {
  float max = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] *= scale;
    max = std::max(max, x[i]);
  }
  const float inv = static_cast<float>(1.0 / attention_kernels().exp_sum(x, n, max));
  for (std::size_t i = 0; i < n; ++i) x[i] *= inv;
}

namespace {

void dots_f16_lanes8_scalar(std::size_t n, const std::uint16_t* a, std::size_t stride,
                            std::size_t rows, const float* b, float* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint16_t* ar = a + r * stride;
    float l[8] = {};
    for (std::size_t i = 0; i < n; ++i) l[i % 8] = std::fma(fp16_to_f32(ar[i]), b[i], l[i % 8]);
    out[r] = reduce_lanes8(l, 1);
  }
}

void dots_f16_lanes8_multi_scalar(std::size_t n, const std::uint16_t* a, std::size_t stride,
                                  std::size_t rows, const float* b, std::size_t nq, float* out,
                                  std::size_t out_stride) {
  for (std::size_t q = 0; q < nq; ++q) {
    dots_f16_lanes8_scalar(n, a, stride, rows, b + q * n, out + q * out_stride);
  }
}

void weighted_sum_f16_scalar(std::size_t n, const float* w, const std::uint16_t* v,
                             std::size_t stride, std::size_t count, std::size_t lanes, float* acc) {
  std::fill(acc, acc + lanes * n, 0.0f);
  for (std::size_t j = 0; j < count; ++j) {
    float* a = acc + (j % lanes) * n;
    const std::uint16_t* vj = v + j * stride;
    for (std::size_t i = 0; i < n; ++i) a[i] = std::fma(w[j], fp16_to_f32(vj[i]), a[i]);
  }
}

void weighted_sum_f16_multi_scalar(std::size_t n, const float* w, std::size_t w_stride,
                                   std::size_t nq, const std::uint16_t* v, std::size_t stride,
                                   std::size_t count, std::size_t lanes, float* acc) {
  for (std::size_t q = 0; q < nq; ++q) {
    weighted_sum_f16_scalar(n, w + q * w_stride, v, stride, count, lanes, acc + q * lanes * n);
  }
}

double exp_sum_scalar(float* x, std::size_t n, float max) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; i += 8) {
    float lane[8] = {};
    for (std::size_t l = 0; l < 8 && i + l < n; ++l) lane[l] = x[i + l] = exp_ggml(x[i + l] - max);
    sum += static_cast<double>(reduce_lanes8(lane, 1));
  }
  return sum;
}

void round_f16_scalar(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = fp16_to_f32(f32_to_fp16(x[i]));
}

void swiglu_scalar(float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + exp_ggml(0.0f - g)) * up[i];
  }
}

constexpr AttentionKernels kScalar{dots_f16_lanes8_scalar,
                                   dots_f16_lanes8_multi_scalar,
                                   weighted_sum_f16_scalar,
                                   weighted_sum_f16_multi_scalar,
                                   exp_sum_scalar,
                                   round_f16_scalar,
                                   swiglu_scalar};

}  // namespace

const AttentionKernels& attention_kernels_scalar() noexcept {
  return kScalar;
}

const AttentionKernels& attention_kernels() noexcept {
  static const AttentionKernels* chosen = [] {
#if defined(NEXTOK_HAVE_QUANT_AVX2)
    if (&quant::active_kernels() != &quant::scalar_kernels()) return attention_kernels_avx2();
#endif
    return &kScalar;
  }();
  return *chosen;
}

float reduce_lanes8(const float* x, std::size_t stride) noexcept {
  auto l = [&](std::size_t i) { return x[i * stride]; };
  return ((l(0) + l(4)) + (l(2) + l(6))) + ((l(1) + l(5)) + (l(3) + l(7)));
}

float reduce_lanes32(const float* x, std::size_t stride) noexcept {
  float v[4][8];
  for (std::size_t q = 0; q < 4; ++q) {
    for (std::size_t l = 0; l < 8; ++l) v[q][l] = x[(q * 8 + l) * stride];
  }
  for (std::size_t l = 0; l < 8; ++l) {
    v[0][l] += v[2][l];
    v[1][l] += v[3][l];
  }
  for (std::size_t l = 0; l < 8; ++l) v[0][l] += v[1][l];
  float t[4];
  for (std::size_t l = 0; l < 4; ++l) t[l] = v[0][l] + v[0][l + 4];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

void swiglu(float* gate, const float* up, std::size_t n) noexcept {
  attention_kernels().swiglu(gate, up, n);
}

}  // namespace nextok::model
