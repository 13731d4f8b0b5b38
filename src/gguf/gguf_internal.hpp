// Helpers shared by the GGUF reader's translation units.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "nextok/gguf.hpp"

namespace nextok::gguf_detail {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader assumes a little-endian host");

template <class T>
inline T load(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Encoded size of a fixed-size value type; 0 for strings and arrays.
inline uint64_t scalar_size(GgufType t) noexcept {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    case GgufType::kString:
    case GgufType::kArray:
      return 0;
  }
  return 0;
}

inline bool is_integer(GgufType t) noexcept {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kU16:
    case GgufType::kI16:
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kU64:
    case GgufType::kI64:
      return true;
    default:
      return false;
  }
}

// One character of a key or name, escaped for an error message.
std::string printable_char(char c);
// A key or name for an error message: escaped, and cut at 96 bytes.
std::string printable(std::string_view s);
// "u32", "string", "array of f32", …
std::string describe_type(const GgufKv& kv);
// The value of an unsigned (or non-negative signed) integer scalar.
std::optional<uint64_t> scalar_to_u64(const GgufKv& kv);

}  // namespace nextok::gguf_detail
