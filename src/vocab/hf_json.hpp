// Parses a Hugging Face tokenizer.json into a TokenizerSpec.
#pragma once

#include <simdjson.h>

#include <string_view>

#include "vocab/spec.hpp"

namespace nextok::vocab {

// The returned views point into the parser's buffers: keep `parser` alive and
// do not reuse it while the spec is in use. `name` labels error messages.
TokenizerSpec parse_tokenizer_json(simdjson::dom::parser& parser, simdjson::padded_string_view json,
                                   std::string_view name);

}  // namespace nextok::vocab
