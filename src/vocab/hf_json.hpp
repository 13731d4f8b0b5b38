// Parses a Hugging Face tokenizer.json into a TokenizerSpec.
#pragma once

#include <simdjson.h>

#include <deque>
#include <string>
#include <string_view>

#include "vocab/spec.hpp"

namespace nextok::vocab {

// Unescaped copies of strings that had escapes; the spec's views may point
// here. The merges get their own store because a second thread reads them.
struct JsonStrings {
  std::deque<std::string> main, merges;
};

// The returned views point into `json` or into `strings`: keep both alive
// while the spec is in use. `name` labels errors. With `with_merges` false,
// model.merges is validated but not kept (the vocabulary alone does not need
// it).
TokenizerSpec parse_tokenizer_json(std::string_view json, std::string_view name,
                                   JsonStrings& strings, bool with_merges = true);

}  // namespace nextok::vocab
