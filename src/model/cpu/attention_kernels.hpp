// The attention inner loops, per ISA (scalar and AVX2 agree bit for bit; the
// order of every sum is fixed by the lane layout, not by the ISA).
#pragma once
#include <cstddef>
#include <cstdint>

namespace nextok::model {

struct AttentionKernels {
  // out[r] = Σ fp16(a[r·stride + i])·b[i] for r < rows: lane i % 8 takes an
  // FMA per element, then reduce_lanes8 (n % 8 == 0).
  void (*dots_f16_lanes8)(std::size_t n, const std::uint16_t* a, std::size_t stride,
                          std::size_t rows, const float* b, float* out);
  // The same sums for nq queries b[q·n + ·] at once (the heads sharing one
  // KV head): out[q·out_stride + r]. Each key row is loaded once for all.
  void (*dots_f16_lanes8_multi)(std::size_t n, const std::uint16_t* a, std::size_t stride,
                                std::size_t rows, const float* b, std::size_t nq, float* out,
                                std::size_t out_stride);
  // The weighted sum of `count` fp16 rows v[j·stride + ·] of width n
  // (n % 8 == 0) into `lanes` partial sums: acc[l·n + i] starts at 0 and
  // takes fma(w[j], fp16(v[j·stride + i]), ·) for each j ≡ l (mod lanes), in
  // increasing j. Each partial sum is one FMA chain, so its order is fixed
  // whatever the ISA keeps in registers.
  void (*weighted_sum_f16)(std::size_t n, const float* w, const std::uint16_t* v,
                           std::size_t stride, std::size_t count, std::size_t lanes, float* acc);
  // weighted_sum_f16 for nq weight rows w[q·w_stride + ·] over the same
  // value rows (the heads sharing one KV head), into acc[q·lanes·n + ·];
  // each value chunk is converted once for all of them.
  void (*weighted_sum_f16_multi)(std::size_t n, const float* w, std::size_t w_stride,
                                 std::size_t nq, const std::uint16_t* v, std::size_t stride,
                                 std::size_t count, std::size_t lanes, float* acc);
  // x[i] = exp_ggml(x[i] - max) in groups of 8 (a short last group is padded
  // with zeros); returns Σ over groups of each group's pairwise sum, in double.
  double (*exp_sum)(float* x, std::size_t n, float max);
  // x[i] = fp16_to_f32(f32_to_fp16(x[i])): rounds to fp16 precision (RNE).
  void (*round_f16)(float* x, std::size_t n);
  // gate[i] = gate[i] / (1 + exp_ggml(0 - gate[i])) * up[i]
  void (*swiglu)(float* gate, const float* up, std::size_t n);
};

const AttentionKernels& attention_kernels() noexcept;
// The reference order every ISA reproduces.
const AttentionKernels& attention_kernels_scalar() noexcept;
// Defined in attention_avx2.cpp (x86 builds only).
const AttentionKernels* attention_kernels_avx2() noexcept;

}  // namespace nextok::model
