// A deterministic, varied text corpus for tokenizer benchmarks: prose in
// several scripts, code, JSON, numbers, emoji with ZWJ sequences, whitespace
// runs and special-token strings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nextok::tools {

// Documents totalling about `bytes` bytes of UTF-8.
std::vector<std::string> text_corpus(std::size_t bytes, std::uint64_t seed);

}  // namespace nextok::tools
