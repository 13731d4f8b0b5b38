// ggml block formats and the dot products the Llama runtime needs. The
// activations are quantized the way ggml's CPU backend does it (Q8_0 for
// Q4_0/Q8_0 weights, Q8_1 for Q4_1 weights) so that logits track llama.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace nextok::model {

inline constexpr std::size_t kQK = 32;  // elements per block

struct BlockQ4_0 {
  std::uint16_t d;      // fp16 scale
  std::uint8_t qs[16];  // nibbles: element j in the low half of qs[j], j+16 in the high half
};
struct BlockQ4_1 {
  std::uint16_t d, m;  // fp16 scale and minimum
  std::uint8_t qs[16];
};
struct BlockQ8_0 {
  std::uint16_t d;
  std::int8_t qs[32];
};
struct BlockQ8_1 {
  std::uint16_t d, s;  // fp16 scale and d * sum(qs)
  std::int8_t qs[32];
};
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ8_0) == 34 &&
              sizeof(BlockQ8_1) == 36);

float fp16_to_f32(std::uint16_t h) noexcept;
std::uint16_t f32_to_fp16(float f) noexcept;  // round to nearest even

// x[n] -> blocks (n a multiple of 32), as ggml's quantize_row_q8_0 / _q8_1.
void quantize_row_q8_0(const float* x, BlockQ8_0* y, std::size_t n) noexcept;
void quantize_row_q8_1(const float* x, BlockQ8_1* y, std::size_t n) noexcept;

// One weight row (n elements) against quantized activations.
float dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) noexcept;
float dot_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x) noexcept;
float dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) noexcept;
inline constexpr std::size_t kMaxDotRows = 8;
// One weight row against m <= kMaxDotRows activation rows (row i at x + i * stride
// blocks): out[i] equals the single-row dot bit for bit, while the weight
// blocks are loaded and unpacked once for all m.
void dotm_q4_1_q8_1(std::size_t n, const BlockQ4_1* w, const BlockQ8_1* x, std::size_t stride,
                    std::size_t m, float* out) noexcept;
void dotm_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t stride,
                    std::size_t m, float* out) noexcept;
// F16 and F32 weights against fp16 / f32 activations.
float dot_f16_f16(std::size_t n, const std::uint16_t* w, const std::uint16_t* x) noexcept;
float dot_f32_f32(std::size_t n, const float* w, const float* x) noexcept;

// A row of a ggml tensor of type `ggml_type` (F32, F16, Q4_0, Q4_1, Q8_0) to
// floats. Returns false for other types.
bool dequantize_row(std::uint32_t ggml_type, const void* src, float* dst, std::size_t n) noexcept;

}  // namespace nextok::model
