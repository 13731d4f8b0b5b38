#include <cmath>
#include <limits>

#include "backend/cpu/exp_f32.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/lane_sums.hpp"
#include "backend/cpu/scalar_loops.hpp"

namespace nextok::cpu {
namespace {

template <typename T>
ArgmaxResult argmax_impl(const T* x, std::size_t n, const std::uint32_t* mask) {
  ArgmaxResult r{-1, kNegInf, false};
  argmax_range(x, 0, n, mask, r);
  return r;
}

ArgmaxResult argmax_f32(const float* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(x, n, mask);
}

ArgmaxResult argmax_bf16(const std::uint16_t* x, std::size_t n, const std::uint32_t* mask) {
  return argmax_impl(x, n, mask);
}

bool load_f32(const float* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_range(src, 0, n, mask, dst);
}

bool load_bf16(const std::uint16_t* src, std::size_t n, const std::uint32_t* mask, float* dst) {
  return load_range(src, 0, n, mask, dst);
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
  return indices_ge_range(x, 0, n, threshold, out, 0);
}

std::size_t band_split(const float* e, std::size_t n, float lo, float hi, double* mass_above,
                       double* block_sums, std::int32_t* out) {
  ExpResult mass;
  LaneAcc acc;
  std::size_t k = 0;
  for (std::size_t base = 0, block = 0; base < n; base += kSumBlock, ++block) {
    const std::size_t end = base + kSumBlock < n ? base + kSumBlock : n;
    band_split_range(e, base, end, lo, hi, acc, out, k);
    flush_block(acc, mass, block_sums, block);
  }
  *mass_above = mass.total;
  return k;
}

}  // namespace

const Kernels& scalar_kernels() noexcept {
  static const Kernels k{"scalar", argmax_f32,  argmax_bf16, load_f32,  load_bf16,
                         max_f32,  exp_weights, indices_ge,  band_split};
  return k;
}

}  // namespace nextok::cpu
