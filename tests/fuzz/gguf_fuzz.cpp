// libFuzzer target for the GGUF reader: any input must either parse or throw
// nextok::Error; every accessor on a parsed file must stay in bounds.
// Build with -DNEXTOK_FUZZ=ON and clang; see docs/gguf.md.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "nextok/error.hpp"
#include "nextok/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nextok::GgufFile;
  std::optional<GgufFile> parsed;
  try {
    parsed.emplace(
        GgufFile::from_memory(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz"));
  } catch (const nextok::Error&) {
    return 0;
  }
  const GgufFile& f = *parsed;
  volatile size_t sink = 0;
  for (const auto& kv : f.metadata()) {
    const auto key = kv.key;
    if (f.find(key) == nullptr) __builtin_trap();  // the index must find every key
    try {
      if (auto v = f.get_string(key)) sink = sink + v->size();
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_int(key)) sink = sink + static_cast<size_t>(*v);
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_float(key)) sink = sink + (*v > 0);
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_bool(key)) sink = sink + *v;
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_string_array(key))
        for (const auto s : *v)
          sink = sink + (s.empty() ? 0 : static_cast<unsigned char>(s.back()));
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_int_array(key)) sink = sink + v->size();
    } catch (const nextok::Error&) {
    }
    try {
      if (auto v = f.get_float_array(key)) sink = sink + v->size();
    } catch (const nextok::Error&) {
    }
  }
  for (const auto& t : f.tensors()) {
    if (f.find_tensor(t.name) != &t) __builtin_trap();
    try {
      const auto d = f.tensor_data(t);
      if (!d.empty()) sink = sink + static_cast<size_t>(d.front()) + static_cast<size_t>(d.back());
    } catch (const nextok::Error&) {
    }
  }
  (void)f.keys();
  return 0;
}
