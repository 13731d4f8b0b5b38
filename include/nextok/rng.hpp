// Pcg32: PCG-XSH-RR 64/32, bit-identical to O'Neill's pcg32_srandom_r /
// pcg32_random_r reference.
#pragma once

#include <cstdint>

namespace nextok {

class Pcg32 {
 public:
  static constexpr std::uint64_t kMultiplier = 6364136223846793005ULL;
  // Stream used for request seeds: Pcg32::for_seed(s) == pcg32_srandom_r(s, 0).
  static constexpr std::uint64_t kRequestStream = 0;

  // pcg32_srandom_r(initstate, initseq).
  constexpr Pcg32(std::uint64_t initstate, std::uint64_t initseq) noexcept
      : state_(0), inc_((initseq << 1U) | 1U) {
    next_u32();
    state_ += initstate;
    next_u32();
  }

  // The generator a request with this seed uses (see docs/semantics.md).
  static constexpr Pcg32 for_seed(std::uint64_t seed) noexcept { return {seed, kRequestStream}; }

  // pcg32_random_r.
  constexpr std::uint32_t next_u32() noexcept {
    const std::uint64_t old = state_;
    state_ = old * kMultiplier + inc_;
    const auto xorshifted = static_cast<std::uint32_t>(((old >> 18U) ^ old) >> 27U);
    const auto rot = static_cast<std::uint32_t>(old >> 59U);
    return (xorshifted >> rot) | (xorshifted << ((32U - rot) & 31U));
  }

  // Uniform in [0, 1): the top 24 bits of one draw, times 2^-24. Exact in float.
  constexpr float next_f32() noexcept {
    return static_cast<float>(next_u32() >> 8U) * 0x1p-24f;
  }

  constexpr std::uint64_t state() const noexcept { return state_; }
  constexpr std::uint64_t inc() const noexcept { return inc_; }

 private:
  std::uint64_t state_;
  std::uint64_t inc_;
};

}  // namespace nextok
