#include <cmath>
#include <limits>

#include "backend/cpu/bf16.hpp"
#include "backend/cpu/exp_f32.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/lane_sums.hpp"

namespace nextok::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline bool allowed(const std::uint32_t* mask, std::size_t i) {
  return mask == nullptr || ((mask[i / 32] >> (i % 32)) & 1U) != 0;
}

template <typename Load>
ArgmaxResult argmax_impl(std::size_t n, const std::uint32_t* mask, Load load) {
  ArgmaxResult r{-1, kNegInf, false};
  for (std::size_t i = 0; i < n; ++i) {
    const float v = load(i);
    if (std::isnan(v)) {
      r.has_nan = true;
      continue;
    }
    if (allowed(mask, i) && v > r.value) {
      r.value = v;
      r.index = static_cast<std::int64_t>(i);
    }
  }
  return r;
}

ArgmaxResult argmax_f32(const float* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(n, mask, [x](std::size_t i) { return x[i]; });
}

ArgmaxResult argmax_bf16(const std::uint16_t* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(n, mask, [x](std::size_t i) { return bf16_to_f32(x[i]); });
}

template <typename Load>
bool load_impl(std::size_t n, const std::uint32_t* mask, float* dst, Load load) {
  bool nan = false;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = load(i);
    nan |= std::isnan(v);
    dst[i] = allowed(mask, i) ? v : kNegInf;
  }
  return nan;
}

bool load_f32(const float* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(n, mask, dst, [src](std::size_t i) { return src[i]; });
}

bool load_bf16(const std::uint16_t* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_impl(n, mask, dst, [src](std::size_t i) { return bf16_to_f32(src[i]); });
}

float max_f32(const float* x, std::size_t n) {
  float m = kNegInf;
  for (std::size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

ExpResult exp_weights(const float* x, std::size_t n, const ExpParams& p, float* e_out,
                      double* block_sums) {
  ExpResult out;
  LaneAcc acc;
  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    for (std::size_t i = base; i < end; ++i) {
      const float t = x[i] * p.scale;
      const float e = expc::exp_f32(t - p.shift);
      if (e_out != nullptr) e_out[i] = e;
      const std::size_t lane = (i - base) & 7U;
      acc.sum[lane] += static_cast<double>(e);
      if (p.ladder != nullptr) {
        for (int j = 0; j < kLadderLevels; ++j) {
          if (e >= p.ladder[j]) ++acc.count[j];
        }
      }
    }
    flush_block(acc, out, block_sums, block);
  }
  return out;
}

std::size_t indices_ge(const float* x, std::size_t n, float threshold, std::int32_t* out) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] >= threshold) out[k++] = static_cast<std::int32_t>(i);
  }
  return k;
}

}  // namespace

const Kernels& scalar_kernels() noexcept {
  static const Kernels k{"scalar", argmax_f32, argmax_bf16, load_f32, load_bf16, max_f32,
                         exp_weights, indices_ge};
  return k;
}

}  // namespace nextok::cpu
