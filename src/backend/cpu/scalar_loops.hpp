// The per-element loops of the scalar kernels. The AVX2 kernels run the same
// loops on their tails, so both ISAs share one definition. Internal linkage
// on purpose: the AVX2 translation unit is built with -mavx2, and its copies
// must never be the ones the scalar kernels link to.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "backend/cpu/bf16.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/lane_sums.hpp"

namespace nextok::cpu {
namespace {  // NOLINT: see above

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline float load1(const float* x, std::size_t i) {
  return x[i];
}
inline float load1(const std::uint16_t* x, std::size_t i) {
  return bf16_to_f32(x[i]);
}

inline bool allowed(const std::uint32_t* mask, std::size_t i) {
  return mask == nullptr || ((mask[i / 32] >> (i % 32)) & 1U) != 0;
}

// Folds [begin, end) into r: strictly greater wins, so ties keep the lower index.
template <typename T>
void argmax_range(const T* x, std::size_t begin, std::size_t end, const std::uint32_t* mask,
                  ArgmaxResult& r) {
  for (std::size_t i = begin; i < end; ++i) {
    const float v = load1(x, i);
    if (std::isnan(v)) {
      r.has_nan = true;
      continue;
    }
    if (allowed(mask, i) && v > r.value) {
      r.value = v;
      r.index = static_cast<std::int64_t>(i);
    }
  }
}

// dst[i] = allowed(i) ? src[i] : -Inf over [begin, end); true if src had a NaN.
template <typename T>
bool load_range(const T* src, std::size_t begin, std::size_t end, const std::uint32_t* mask,
                float* dst) {
  bool nan = false;
  for (std::size_t i = begin; i < end; ++i) {
    const float v = load1(src, i);
    nan |= std::isnan(v);
    dst[i] = allowed(mask, i) ? v : kNegInf;
  }
  return nan;
}

inline std::size_t indices_ge_range(const float* x, std::size_t begin, std::size_t end,
                                    float threshold, std::int32_t* out, std::size_t k) {
  for (std::size_t i = begin; i < end; ++i) {
    if (x[i] >= threshold) out[k++] = static_cast<std::int32_t>(i);
  }
  return k;
}

// band_split's per-element step over [begin, end) of one sum block: adding
// +0.0 for the other lanes leaves every sum's bits unchanged.
inline void band_split_range(const float* e, std::size_t begin, std::size_t end, float lo, float hi,
                             LaneAcc& acc, std::int32_t* out, std::size_t& k) {
  const std::size_t base = begin - begin % kSumBlock;
  for (std::size_t i = begin; i < end; ++i) {
    const float v = e[i];
    acc.sum[(i - base) & 7U] += v > hi ? static_cast<double>(v) : 0.0;
    out[k] = static_cast<std::int32_t>(i);  // branch-free: the band is a few percent, at random
    k += v >= lo && v <= hi ? 1 : 0;
  }
}

}  // namespace
}  // namespace nextok::cpu
