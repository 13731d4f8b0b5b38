// The small JSON configs next to tokenizer.json: tokenizer_config.json
// (special-token spellings, chat template) and config.json /
// generation_config.json (eos_token_id as an int or an array).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vocab/builder.hpp"

namespace nextok::vocab {

struct TokenizerConfig {
  SpecialRoles roles;
  std::optional<std::string> chat_template;
  std::string bos_token, eos_token;  // spellings, "" when absent
};

// Reads tokenizer_config.json text into cfg. `name` labels errors.
void read_tokenizer_config(std::string_view json, std::string_view name, TokenizerConfig& cfg);
// Adds eos/bos/pad ids from config.json or generation_config.json text.
void read_model_config(std::string_view json, std::string_view name, SpecialRoles& roles);

}  // namespace nextok::vocab
