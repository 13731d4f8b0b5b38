// CPU kernel table. Each ISA (scalar, AVX2, AVX-512) fills one; results are
// bit-identical across ISAs by construction (same operation order, no FMA),
// which tests/kernels_test.cpp checks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace nextok::cpu {

inline constexpr int kLadderLevels = 4;
// Sums are accumulated in float over blocks of this many elements (8 lanes),
// then in double across blocks.
inline constexpr std::size_t kSumBlock = 1024;

struct ArgmaxResult {
  std::int64_t index;  // -1 when no element is above -Inf
  float value;
  bool has_nan;
};

struct ExpParams {
  float scale = 1.0f;  // e = exp(x * scale - shift)
  float shift = 0.0f;
  const float* ladder = nullptr;  // kLadderLevels thresholds on e, descending; may be null
};

struct ExpResult {
  double total = 0.0;                               // sum of e over all elements
  std::array<std::int64_t, kLadderLevels> count{};  // #{e >= ladder[j]}
};

struct Kernels {
  const char* name;
  // mask may be null (all allowed).
  ArgmaxResult (*argmax_f32)(const float* x, std::size_t n, const std::uint32_t* mask);
  ArgmaxResult (*argmax_bf16)(const std::uint16_t* x, std::size_t n, const std::uint32_t* mask);
  // dst[i] = allowed(i) ? src[i] : -Inf. Returns true if src holds a NaN anywhere.
  bool (*load_f32)(const float* src, std::size_t n, const std::uint32_t* mask, float* dst);
  bool (*load_bf16)(const std::uint16_t* src, std::size_t n, const std::uint32_t* mask, float* dst);
  // max of a NaN-free array (-Inf when n == 0).
  float (*max_f32)(const float* x, std::size_t n);
  // e[i] = exp(x[i]*scale - shift). e_out and block_sums (ceil(n/kSumBlock)) may be null.
  ExpResult (*exp_weights)(const float* x, std::size_t n, const ExpParams& params, float* e_out,
                           double* block_sums);
  // Writes the indices i with x[i] >= threshold, ascending, to out (capacity n).
  std::size_t (*indices_ge)(const float* x, std::size_t n, float threshold, std::int32_t* out);
  // Over weights e >= 0: *mass_above = the sum of e[i] > hi (exp_weights'
  // summation order; per-kSumBlock sums to block_sums unless null), and the
  // indices with lo <= e[i] <= hi, ascending, to out (capacity n; entries
  // past the count are scratch). Returns how many.
  std::size_t (*band_split)(const float* e, std::size_t n, float lo, float hi, double* mass_above,
                            double* block_sums, std::int32_t* out);
};

const Kernels& scalar_kernels() noexcept;
// nullptr when this build or this CPU has no AVX2.
const Kernels* avx2_kernels() noexcept;
// nullptr when this build or this CPU lacks AVX-512 F/BW/VL/DQ.
const Kernels* avx512_kernels() noexcept;
// The kernels in use, read once: the widest set this CPU runs (AVX-512, then
// AVX2, then scalar). NEXTOK_FORCE_ISA=scalar or =avx2 caps it at that set
// (avx2 falls back to scalar where the CPU lacks it); =avx512, an unknown value
// or no variable leaves the widest set.
const Kernels& active_kernels() noexcept;
// Every kernel set usable on this machine, scalar first (for tests and benchmarks).
std::span<const Kernels* const> available_kernels() noexcept;

}  // namespace nextok::cpu
