// GGUF metadata lookup and typed access, and the ggml type table.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "gguf/gguf_internal.hpp"
#include "nextok/error.hpp"
#include "nextok/gguf.hpp"

namespace nextok {

const char* gguf_type_name(GgufType type) noexcept {
  switch (type) {
    case GgufType::kU8:
      return "u8";
    case GgufType::kI8:
      return "i8";
    case GgufType::kU16:
      return "u16";
    case GgufType::kI16:
      return "i16";
    case GgufType::kU32:
      return "u32";
    case GgufType::kI32:
      return "i32";
    case GgufType::kF32:
      return "f32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kU64:
      return "u64";
    case GgufType::kI64:
      return "i64";
    case GgufType::kF64:
      return "f64";
  }
  return "?";
}

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type) noexcept {
  // Block sizes and bytes per block as in ggml (gguf-py's GGML_QUANT_SIZES).
  switch (type) {
    case 0:
      return GgmlTypeTraits{"F32", 1, 4};
    case 1:
      return GgmlTypeTraits{"F16", 1, 2};
    case 2:
      return GgmlTypeTraits{"Q4_0", 32, 18};
    case 3:
      return GgmlTypeTraits{"Q4_1", 32, 20};
    case 6:
      return GgmlTypeTraits{"Q5_0", 32, 22};
    case 7:
      return GgmlTypeTraits{"Q5_1", 32, 24};
    case 8:
      return GgmlTypeTraits{"Q8_0", 32, 34};
    case 9:
      return GgmlTypeTraits{"Q8_1", 32, 40};
    case 10:
      return GgmlTypeTraits{"Q2_K", 256, 84};
    case 11:
      return GgmlTypeTraits{"Q3_K", 256, 110};
    case 12:
      return GgmlTypeTraits{"Q4_K", 256, 144};
    case 13:
      return GgmlTypeTraits{"Q5_K", 256, 176};
    case 14:
      return GgmlTypeTraits{"Q6_K", 256, 210};
    case 15:
      return GgmlTypeTraits{"Q8_K", 256, 292};
    case 16:
      return GgmlTypeTraits{"IQ2_XXS", 256, 66};
    case 17:
      return GgmlTypeTraits{"IQ2_XS", 256, 74};
    case 18:
      return GgmlTypeTraits{"IQ3_XXS", 256, 98};
    case 19:
      return GgmlTypeTraits{"IQ1_S", 256, 50};
    case 20:
      return GgmlTypeTraits{"IQ4_NL", 32, 18};
    case 21:
      return GgmlTypeTraits{"IQ3_S", 256, 110};
    case 22:
      return GgmlTypeTraits{"IQ2_S", 256, 82};
    case 23:
      return GgmlTypeTraits{"IQ4_XS", 256, 136};
    case 24:
      return GgmlTypeTraits{"I8", 1, 1};
    case 25:
      return GgmlTypeTraits{"I16", 1, 2};
    case 26:
      return GgmlTypeTraits{"I32", 1, 4};
    case 27:
      return GgmlTypeTraits{"I64", 1, 8};
    case 28:
      return GgmlTypeTraits{"F64", 1, 8};
    case 29:
      return GgmlTypeTraits{"IQ1_M", 256, 56};
    case 30:
      return GgmlTypeTraits{"BF16", 1, 2};
    case 34:
      return GgmlTypeTraits{"TQ1_0", 256, 54};
    case 35:
      return GgmlTypeTraits{"TQ2_0", 256, 66};
    case 39:
      return GgmlTypeTraits{"MXFP4", 32, 17};
    default:
      return std::nullopt;
  }
}

namespace gguf_detail {

std::string printable_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f && c != '\\' && c != '\'') return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", u);
  return buf;
}

std::string printable(std::string_view s) {
  constexpr size_t kMax = 96;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    // Keep UTF-8 bytes; escape control characters and quotes.
    out += u >= 0x80 ? std::string(1, s[i]) : printable_char(s[i]);
  }
  if (s.size() > kMax) out += "…";
  return out;
}

std::string describe_type(const GgufKv& kv) {
  if (kv.type == GgufType::kArray)
    return std::string("array of ") + gguf_type_name(kv.element_type);
  return gguf_type_name(kv.type);
}

namespace {

// Widens integer element `i` of a packed array of `t` (an integer type).
// Returns false when a u64 does not fit int64.
inline bool int_at(GgufType t, const std::byte* p, int64_t& out) noexcept {
  switch (t) {
    case GgufType::kU8:
      out = load<uint8_t>(p);
      return true;
    case GgufType::kI8:
      out = load<int8_t>(p);
      return true;
    case GgufType::kU16:
      out = load<uint16_t>(p);
      return true;
    case GgufType::kI16:
      out = load<int16_t>(p);
      return true;
    case GgufType::kU32:
      out = load<uint32_t>(p);
      return true;
    case GgufType::kI32:
      out = load<int32_t>(p);
      return true;
    case GgufType::kI64:
      out = load<int64_t>(p);
      return true;
    case GgufType::kU64: {
      const auto v = load<uint64_t>(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
      out = static_cast<int64_t>(v);
      return true;
    }
    default:
      return false;
  }
}

template <class T, class Out>
void widen_all(const std::byte* p, uint64_t n, std::vector<Out>& out) {
  for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(load<T>(p + i * sizeof(T)));
}

}  // namespace

std::optional<uint64_t> scalar_to_u64(const GgufKv& kv) {
  if (!is_integer(kv.type)) return std::nullopt;
  if (kv.type == GgufType::kU64) return load<uint64_t>(kv.payload.data());
  int64_t v = 0;
  if (!int_at(kv.type, kv.payload.data(), v) || v < 0) return std::nullopt;
  return static_cast<uint64_t>(v);
}

}  // namespace gguf_detail

using gguf_detail::describe_type;
using gguf_detail::load;

namespace {

[[noreturn]] void type_error(const GgufFile& f, const GgufKv& kv, const char* wanted) {
  throw Error(ErrorCode::kMalformedFile, std::string(kv.key),
              f.name() + ": metadata key '" + gguf_detail::printable(kv.key) + "' is " +
                  describe_type(kv) + ", expected " + wanted + " at offset " +
                  std::to_string(kv.offset));
}

[[noreturn]] void range_error(const GgufFile& f, const GgufKv& kv, const std::string& what) {
  throw Error(ErrorCode::kMalformedFile, std::string(kv.key),
              f.name() + ": metadata key '" + gguf_detail::printable(kv.key) + "': " + what +
                  " at offset " + std::to_string(kv.offset));
}

}  // namespace

const GgufKv* GgufFile::find(std::string_view key) const noexcept {
  const auto it = std::lower_bound(kv_index_.begin(), kv_index_.end(), key,
                                   [&](uint32_t i, std::string_view k) { return kvs_[i].key < k; });
  if (it == kv_index_.end() || kvs_[*it].key != key) return nullptr;
  return &kvs_[*it];
}

std::vector<std::string_view> GgufFile::keys() const {
  std::vector<std::string_view> out;
  out.reserve(kvs_.size());
  for (const auto& kv : kvs_) out.push_back(kv.key);
  return out;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kString) type_error(*this, *kv, "string");
  return std::string_view(reinterpret_cast<const char*>(kv->payload.data()), kv->payload.size());
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (!gguf_detail::is_integer(kv->type)) type_error(*this, *kv, "an integer");
  int64_t v = 0;
  if (!gguf_detail::int_at(kv->type, kv->payload.data(), v))
    range_error(
        *this, *kv,
        "u64 value " + std::to_string(load<uint64_t>(kv->payload.data())) + " does not fit int64");
  return v;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type == GgufType::kF32) return static_cast<double>(load<float>(kv->payload.data()));
  if (kv->type == GgufType::kF64) return load<double>(kv->payload.data());
  if (kv->type == GgufType::kU64) return static_cast<double>(load<uint64_t>(kv->payload.data()));
  if (!gguf_detail::is_integer(kv->type)) type_error(*this, *kv, "a number");
  int64_t v = 0;
  gguf_detail::int_at(kv->type, kv->payload.data(), v);
  return static_cast<double>(v);
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kBool) type_error(*this, *kv, "bool");
  return load<uint8_t>(kv->payload.data()) != 0;
}

std::optional<std::vector<std::string_view>> GgufFile::get_string_array(
    std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kArray || kv->element_type != GgufType::kString)
    type_error(*this, *kv, "array of string");
  // Validated at open: every element's length fits the payload.
  std::vector<std::string_view> out(kv->count);
  const std::byte* p = kv->payload.data();
  for (uint64_t i = 0; i < kv->count; ++i) {
    const auto len = load<uint64_t>(p);
    out[i] = std::string_view(reinterpret_cast<const char*>(p + 8), len);
    p += 8 + len;
  }
  return out;
}

namespace {

// Widens an array of any integer element type but u64 into `out`; false for
// other element types.
template <class Out>
bool widen_integers(GgufType t, const std::byte* p, uint64_t n, std::vector<Out>& out) {
  using gguf_detail::widen_all;
  switch (t) {
    case GgufType::kU8:
      widen_all<uint8_t>(p, n, out);
      return true;
    case GgufType::kI8:
      widen_all<int8_t>(p, n, out);
      return true;
    case GgufType::kU16:
      widen_all<uint16_t>(p, n, out);
      return true;
    case GgufType::kI16:
      widen_all<int16_t>(p, n, out);
      return true;
    case GgufType::kU32:
      widen_all<uint32_t>(p, n, out);
      return true;
    case GgufType::kI32:
      widen_all<int32_t>(p, n, out);
      return true;
    case GgufType::kI64:
      widen_all<int64_t>(p, n, out);
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kArray || !gguf_detail::is_integer(kv->element_type))
    type_error(*this, *kv, "array of integers");
  std::vector<int64_t> out(kv->count);
  const std::byte* p = kv->payload.data();
  if (!widen_integers(kv->element_type, p, kv->count, out)) {  // u64: range-checked
    for (uint64_t i = 0; i < kv->count; ++i) {
      const auto v = load<uint64_t>(p + 8 * i);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        range_error(
            *this, *kv,
            "u64 element " + std::to_string(i) + " = " + std::to_string(v) + " does not fit int64");
      out[i] = static_cast<int64_t>(v);
    }
  }
  return out;
}

std::optional<std::vector<float>> GgufFile::get_float_array(std::string_view key) const {
  const GgufKv* kv = find(key);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kArray ||
      (kv->element_type != GgufType::kF32 && kv->element_type != GgufType::kF64 &&
       !gguf_detail::is_integer(kv->element_type)))
    type_error(*this, *kv, "array of numbers");
  std::vector<float> out(kv->count);
  const std::byte* p = kv->payload.data();
  if (kv->element_type == GgufType::kF32) {
    if (kv->count != 0) std::memcpy(out.data(), p, kv->count * sizeof(float));
  } else if (kv->element_type == GgufType::kF64) {
    gguf_detail::widen_all<double>(p, kv->count, out);
  } else if (kv->element_type == GgufType::kU64) {
    gguf_detail::widen_all<uint64_t>(p, kv->count, out);
  } else {
    widen_integers(kv->element_type, p, kv->count, out);
  }
  return out;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const noexcept {
  const auto it =
      std::lower_bound(tensor_index_.begin(), tensor_index_.end(), name,
                       [&](uint32_t i, std::string_view k) { return tensors_[i].name < k; });
  if (it == tensor_index_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

std::span<const std::byte> GgufFile::tensor_data(const GgufTensorInfo& tensor) const {
  if (!tensor.n_bytes)
    throw Error(ErrorCode::kUnsupported, std::string(tensor.name),
                name_ + ": tensor '" + gguf_detail::printable(tensor.name) + "' has ggml type " +
                    std::to_string(tensor.type) + ", whose size nextok does not know");
  return {tensor.data, static_cast<size_t>(*tensor.n_bytes)};
}

}  // namespace nextok
