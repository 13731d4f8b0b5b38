// Checks that turn a Python array (numpy, torch, anything with DLPack or
// the buffer protocol) into a typed view without copying, raising TypeError
// for a wrong dtype and ValueError for a wrong shape, layout or device.
#pragma once

#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nextok/logits.hpp"

namespace nextok::py {

namespace nb = nanobind;

using AnyArray = nb::ndarray<nb::ro>;  // read-only access is enough
using MutArray = nb::ndarray<>;        // written in place

// The element types the extension accepts.
inline const nb::dlpack::dtype kF32 = nb::dtype<float>();
inline const nb::dlpack::dtype kBF16{static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat), 16,
                                     1};
inline const nb::dlpack::dtype kI32 = nb::dtype<std::int32_t>();
inline const nb::dlpack::dtype kU32 = nb::dtype<std::uint32_t>();
inline const nb::dlpack::dtype kI64 = nb::dtype<std::int64_t>();
inline const nb::dlpack::dtype kU64 = nb::dtype<std::uint64_t>();

// A [B, W] (or [W], as B = 1) uint32 bitmask; int32 and uint32 accepted.
struct BitmaskView {
  std::uint32_t* data = nullptr;
  std::size_t rows = 0;
  std::size_t words = 0;
  std::span<std::uint32_t> row(std::size_t b) const { return {data + b * words, words}; }
};

// A [B, V] (or [V]) float32 / bfloat16 CPU logits array.
LogitsView logits_view(const AnyArray& a, const char* name);
// Same, writable (apply_token_bitmask_inplace).
struct MutLogits {
  void* data = nullptr;
  DType dtype = DType::kF32;
  std::size_t rows = 0;
  std::size_t vocab = 0;
};
MutLogits mutable_logits(const MutArray& a, const char* name);

BitmaskView bitmask_view(const MutArray& a, const char* name);
// The same over a read-only array (the view must not be written through).
BitmaskView bitmask_view_ro(const AnyArray& a, const char* name);
// A read-only 1-D bitmask row (a sampler's mask argument).
std::span<const std::uint32_t> bitmask_row(const AnyArray& a, const char* name);

// A 1-D numpy array that owns `values`.
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& values, std::vector<std::size_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.data(), owner);
}

}  // namespace nextok::py
