#include <array>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/kernels.hpp"

namespace nextok::cpu {

#if defined(NEXTOK_HAVE_AVX2)
const Kernels* avx2_kernels_table() noexcept;
#endif

const Kernels* avx2_kernels() noexcept {
#if defined(NEXTOK_HAVE_AVX2)
  static const bool supported = __builtin_cpu_supports("avx2") != 0;
  return supported ? avx2_kernels_table() : nullptr;
#else
  return nullptr;
#endif
}

const Kernels& active_kernels() noexcept {
  static const Kernels* chosen = [] {
    const char* force = std::getenv("NEXTOK_FORCE_ISA");
    if (force != nullptr && std::strcmp(force, "scalar") == 0) return &scalar_kernels();
    const Kernels* avx2 = avx2_kernels();
    return avx2 != nullptr ? avx2 : &scalar_kernels();
  }();
  return *chosen;
}

std::span<const Kernels* const> available_kernels() noexcept {
  static const auto list = [] {
    std::array<const Kernels*, 2> l{&scalar_kernels(), avx2_kernels()};
    return l;
  }();
  return {list.data(), list[1] != nullptr ? std::size_t{2} : std::size_t{1}};
}

}  // namespace nextok::cpu
