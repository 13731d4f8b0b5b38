#include <array>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/kernels.hpp"

namespace nextok::cpu {

#if defined(NEXTOK_HAVE_AVX2)
const Kernels* avx2_kernels_table() noexcept;
#endif
#if defined(NEXTOK_HAVE_AVX512)
const Kernels* avx512_kernels_table() noexcept;
#endif

const Kernels* avx2_kernels() noexcept {
#if defined(NEXTOK_HAVE_AVX2)
  static const bool supported = __builtin_cpu_supports("avx2") != 0;
  return supported ? avx2_kernels_table() : nullptr;
#else
  return nullptr;
#endif
}

const Kernels* avx512_kernels() noexcept {
#if defined(NEXTOK_HAVE_AVX512)
  // Every extension kernels_avx512.cpp is compiled with.
  static const bool supported =
      __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
      __builtin_cpu_supports("avx512vl") != 0 && __builtin_cpu_supports("avx512dq") != 0 &&
      __builtin_cpu_supports("popcnt") != 0 && __builtin_cpu_supports("bmi") != 0;
  return supported ? avx512_kernels_table() : nullptr;
#else
  return nullptr;
#endif
}

const Kernels& active_kernels() noexcept {
  static const Kernels* chosen = [] {
    const Kernels* avx512 = avx512_kernels();
    const Kernels* avx2 = avx2_kernels();
    const char* force = std::getenv("NEXTOK_FORCE_ISA");
    const bool want_scalar = force != nullptr && std::strcmp(force, "scalar") == 0;
    const bool want_avx2 = force != nullptr && std::strcmp(force, "avx2") == 0;
    // "avx512", unset or any other value: the widest set this CPU runs.
    if (!want_scalar && !want_avx2 && avx512 != nullptr) return avx512;
    if (!want_scalar && avx2 != nullptr) return avx2;
    return &scalar_kernels();
  }();
  return *chosen;
}

std::span<const Kernels* const> available_kernels() noexcept {
  static const auto list = [] {
    std::array<const Kernels*, 3> l{&scalar_kernels(), nullptr, nullptr};
    std::size_t n = 1;
    for (const Kernels* k : {avx2_kernels(), avx512_kernels()}) {
      if (k != nullptr) l[n++] = k;
    }
    return std::pair{l, n};
  }();
  return {list.first.data(), list.second};
}

}  // namespace nextok::cpu
