#include "model/cpu/matmul.hpp"

#include <algorithm>

#include "model/cpu/quant.hpp"

namespace nextok::model {

namespace {

enum : std::uint32_t { kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 8 };

// Bytes of the activations for one vector of `cols` in the weight's dot type.
std::size_t act_bytes(std::uint32_t type, std::size_t cols) {
  switch (type) {
    case kF32:
      return cols * 4;
    case kF16:
      return cols * 2;
    case kQ4_0:
    case kQ8_0:
      return cols / kQK * sizeof(BlockQ8_0);
    case kQ4_1:
      return cols / kQK * sizeof(BlockQ8_1);
  }
  return 0;
}

void quantize(std::uint32_t type, const float* x, std::size_t cols, std::byte* out) {
  switch (type) {
    case kF32:
      std::copy(x, x + cols, reinterpret_cast<float*>(out));
      return;
    case kF16: {
      auto* h = reinterpret_cast<std::uint16_t*>(out);
      for (std::size_t i = 0; i < cols; ++i) h[i] = f32_to_fp16(x[i]);
      return;
    }
    case kQ4_0:
    case kQ8_0:
      quantize_row_q8_0(x, reinterpret_cast<BlockQ8_0*>(out), cols);
      return;
    case kQ4_1:
      quantize_row_q8_1(x, reinterpret_cast<BlockQ8_1*>(out), cols);
      return;
  }
}

float dot(std::uint32_t type, std::size_t n, const std::byte* w, const std::byte* x) {
  switch (type) {
    case kF32:
      return dot_f32_f32(n, reinterpret_cast<const float*>(w), reinterpret_cast<const float*>(x));
    case kF16:
      return dot_f16_f16(n, reinterpret_cast<const std::uint16_t*>(w),
                         reinterpret_cast<const std::uint16_t*>(x));
    case kQ4_0:
      return dot_q4_0_q8_0(n, reinterpret_cast<const BlockQ4_0*>(w),
                           reinterpret_cast<const BlockQ8_0*>(x));
    case kQ4_1:
      return dot_q4_1_q8_1(n, reinterpret_cast<const BlockQ4_1*>(w),
                           reinterpret_cast<const BlockQ8_1*>(x));
    case kQ8_0:
      return dot_q8_0_q8_0(n, reinterpret_cast<const BlockQ8_0*>(w),
                           reinterpret_cast<const BlockQ8_0*>(x));
  }
  return 0.0f;
}

}  // namespace

bool matmul_supports(std::uint32_t t) noexcept {
  return t == kF32 || t == kF16 || t == kQ4_0 || t == kQ4_1 || t == kQ8_0;
}

std::size_t row_bytes(std::uint32_t t, std::size_t cols) noexcept {
  switch (t) {
    case kF32:
      return cols * 4;
    case kF16:
      return cols * 2;
    case kQ4_0:
      return cols % kQK ? 0 : cols / kQK * sizeof(BlockQ4_0);
    case kQ4_1:
      return cols % kQK ? 0 : cols / kQK * sizeof(BlockQ4_1);
    case kQ8_0:
      return cols % kQK ? 0 : cols / kQK * sizeof(BlockQ8_0);
  }
  return 0;
}

void Matmul::operator()(const WeightMatrix& w, const float* x, std::size_t n, float* y,
                        ThreadPool& pool) {
  const std::size_t ab = act_bytes(w.type, w.cols);
  quantized_.resize(ab * n);
  for (std::size_t t = 0; t < n; ++t)
    quantize(w.type, x + t * w.cols, w.cols, quantized_.data() + t * ab);
  const std::byte* q = quantized_.data();
  pool.run([&](unsigned i) {
    std::size_t begin, end;
    ThreadPool::split(w.rows, i, pool.size(), begin, end);
    const bool multi = w.type == kQ4_1 || w.type == kQ8_0;
    if (!multi || n == 1) {
      for (std::size_t r = begin; r < end; ++r) {
        const std::byte* wr = w.row(r);
        for (std::size_t t = 0; t < n; ++t) y[t * w.rows + r] = dot(w.type, w.cols, wr, q + t * ab);
      }
      return;
    }
    // Several activation rows per pass over a weight row (same bits as one
    // at a time). Results go through a tile so each output row is written in
    // whole cache lines: rows of y a power-of-two stride apart would
    // otherwise all map to one cache set.
    constexpr std::size_t kTile = 32;
    float tile[kMaxDotRows][kTile];
    float out[kMaxDotRows];
    for (std::size_t r0 = begin; r0 < end; r0 += kTile) {
      const std::size_t len = std::min(kTile, end - r0);
      for (std::size_t t = 0; t < n; t += kMaxDotRows) {
        const std::size_t m = std::min(kMaxDotRows, n - t);
        for (std::size_t k = 0; k < len; ++k) {
          const std::byte* wr = w.row(r0 + k);
          if (w.type == kQ4_1) {
            dotm_q4_1_q8_1(w.cols, reinterpret_cast<const BlockQ4_1*>(wr),
                           reinterpret_cast<const BlockQ8_1*>(q + t * ab), ab / sizeof(BlockQ8_1),
                           m, out);
          } else {
            dotm_q8_0_q8_0(w.cols, reinterpret_cast<const BlockQ8_0*>(wr),
                           reinterpret_cast<const BlockQ8_0*>(q + t * ab), ab / sizeof(BlockQ8_0),
                           m, out);
          }
          for (std::size_t j = 0; j < m; ++j) tile[j][k] = out[j];
        }
        for (std::size_t j = 0; j < m; ++j)
          std::copy(tile[j], tile[j] + len, y + (t + j) * w.rows + r0);
      }
    }
  });
}

}  // namespace nextok::model
