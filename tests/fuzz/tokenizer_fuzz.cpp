// libFuzzer target for tokenizer.json loading and encoding: any input must
// load or throw nextok::Error; a loaded tokenizer must encode the input's own
// bytes (or reject them as invalid UTF-8) and decode what it encoded.
// Build with -DNEXTOK_FUZZ=ON and clang; see docs/tokenizers.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nextok/error.hpp"
#include "nextok/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // The input is "tokenizer.json \0 text"; no separator means text = input.
  const size_t cut = in.find('\0');
  const std::string_view json = in.substr(0, cut);
  const std::string_view text = cut == std::string_view::npos ? in : in.substr(cut + 1);
  try {
    const nextok::Tokenizer tok = nextok::Tokenizer::from_json(json);
    const auto ids = tok.encode(text);
    for (uint32_t id : ids) {
      if (id >= tok.vocab().size()) __builtin_trap();
    }
    (void)tok.decode(ids);
  } catch (const nextok::Error&) {
  }
  return 0;
}
