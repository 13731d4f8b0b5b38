// Element-wise and row operations of the Llama forward pass, with the float
// rules of ggml's CPU backend (sums of squares in double, rope angles by
// repeated multiplication) so logits track llama.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nextok::model {

// y = x / sqrt(mean(x²) + eps) * w
void rms_norm(const float* x, const float* w, float* y, std::size_t n, float eps) noexcept;
// Rotates pairs (x[2i], x[2i+1]) of the first `dims` values of each head
// (GGUF's "norm" rope, the Llama layout after conversion).
void rope(float* x, std::size_t n_heads, std::size_t head_dim, std::size_t dims,
          std::size_t position, float freq_base) noexcept;
// e^x with the float operations of ggml's AVX2 exp (an ARM optimized-routines
// polynomial), so attention weights round to fp16 exactly as llama.cpp's do.
float exp_ggml(float x) noexcept;
// In place: x = softmax(x * scale) over n values, as ggml's soft_max: exps in
// groups of 8 lanes, each group summed pairwise, the groups summed in double.
void softmax(float* x, std::size_t n, float scale) noexcept;
// Sums of lane accumulators (lane l at x[l * stride]) in the order of ggml's
// AVX2 reductions: 8 lanes pairwise (tinyBLAS's hsum); 32 lanes as four
// vectors folded 0+2, 1+3, 0+1, then halves and horizontal adds.
float reduce_lanes8(const float* x, std::size_t stride) noexcept;
float reduce_lanes32(const float* x, std::size_t stride) noexcept;
// gate = silu(gate) * up (silu through exp_ggml, as ggml's vectorised silu)
void swiglu(float* gate, const float* up, std::size_t n) noexcept;

}  // namespace nextok::model
