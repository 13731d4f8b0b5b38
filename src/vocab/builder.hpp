// Builds the immutable Vocabulary from a parsed TokenizerSpec.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nextok/vocab.hpp"
#include "vocab/spec.hpp"

namespace nextok {

// Ids and spellings of the special roles, as the configs name them.
struct SpecialRoles {
  std::vector<uint32_t> eos_ids;  // from config.json / generation_config.json / GGUF
  std::optional<uint32_t> bos_id, pad_id, unk_id;
  std::vector<std::string> eos_tokens;  // spellings from tokenizer_config.json
  std::optional<std::string> bos_token, pad_token, unk_token;
};

class VocabularyBuilder {
 public:
  // `name` labels error messages.
  static std::shared_ptr<Vocabulary> build(const vocab::TokenizerSpec& spec,
                                           const SpecialRoles& roles, const std::string& name);
  // Index lookup over model-vocabulary spellings only (no added tokens).
  static std::optional<uint32_t> find_model(const Vocabulary& v, std::string_view text) noexcept;
  // Many lookups at once, with prefetching: out[i] = id or ~0u. Table
  // building is bound by cache misses, and this overlaps them.
  static void find_model_batch(const Vocabulary& v, std::span<const std::string_view> texts,
                               std::span<uint32_t> out) noexcept;
};

}  // namespace nextok
