// The attention inner loops, per ISA (scalar and AVX2 agree bit for bit; the
// order of every sum is fixed by the lane layout, not by the ISA).
#pragma once
#include <cstddef>
#include <cstdint>

namespace nextok::model {

struct AttentionKernels {
  // Σ fp16(a[i])·b[i]: lane i % 8 takes an FMA per element (n % 8 == 0).
  float (*dot_f16_lanes8)(std::size_t n, const std::uint16_t* a, const float* b);
  // acc[i] = fma(w, fp16(v[i]), acc[i]) for i < n (n % 8 == 0).
  void (*axpy_f16)(std::size_t n, float w, const std::uint16_t* v, float* acc);
  // x[i] = exp_ggml(x[i] - max) in groups of 8 (a short last group is padded
  // with zeros); returns Σ over groups of each group's pairwise sum, in double.
  double (*exp_sum)(float* x, std::size_t n, float max);
  // gate[i] = gate[i] / (1 + exp_ggml(0 - gate[i])) * up[i]
  void (*swiglu)(float* gate, const float* up, std::size_t n);
};

const AttentionKernels& attention_kernels() noexcept;
// Defined in attention_avx2.cpp (x86 builds only).
const AttentionKernels* attention_kernels_avx2() noexcept;

}  // namespace nextok::model
