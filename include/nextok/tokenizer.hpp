// Tokenizer: text ↔ token ids, loaded from the files a user already has.
// Encoding equals HF `tokenizers` (`encode(text, add_special_tokens=False)`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/stream_decoder.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

struct EncodeOptions {
  // Recognise special tokens (<|im_end|>) written in the text, as HF does by
  // default. Turn it off for untrusted user text: the markers then encode as
  // plain text. Non-special added tokens are always recognised, as in HF.
  bool parse_special = true;
};

class TokenizerImpl;
class GgufFile;
namespace vocab {
struct TokenizerConfig;
}

// The vocabulary alone (no encoder tables): for engines that tokenize
// elsewhere and need only id → bytes, specials and EOS. `dir` is a
// directory with tokenizer.json, the file itself, or a .gguf file.
std::shared_ptr<const Vocabulary> load_vocabulary(const std::filesystem::path& dir);

class Tokenizer {
 public:
  // A directory with tokenizer.json and, when present, tokenizer_config.json,
  // config.json and generation_config.json (EOS ids are the union, as the
  // spec's eos_token_id may be an int or an array).
  static Tokenizer from_dir(const std::filesystem::path& dir);
  // Any of the above by path: a directory, a tokenizer.json, or a .gguf file
  // (recognised by its magic bytes).
  static Tokenizer from_path(const std::filesystem::path& path);
  // tokenizer.json text alone, plus an optional tokenizer_config.json text.
  static Tokenizer from_json(std::string_view tokenizer_json,
                             std::string_view tokenizer_config_json = {});
  // The tokenizer.ggml.* metadata of a GGUF file. A tokenizer whose encoder
  // is not supported (SentencePiece "llama" models, unknown pre-tokenizer
  // names) still loads: vocab() works and encode() throws kUnsupported.
  static Tokenizer from_gguf(const GgufFile& gguf);
  bool can_encode() const noexcept { return impl_ != nullptr; }

  const Vocabulary& vocab() const noexcept { return *vocab_; }
  std::shared_ptr<const Vocabulary> shared_vocab() const noexcept { return vocab_; }

  std::vector<uint32_t> encode(std::string_view text, const EncodeOptions& opt = {}) const;
  // Appends to out; avoids reallocation in hot loops.
  void encode_into(std::string_view text, std::vector<uint32_t>& out,
                   const EncodeOptions& opt = {}) const;
  // Concatenated token bytes. May be invalid UTF-8 when ids split a character.
  std::string decode(std::span<const uint32_t> ids, const DecodeOptions& opt = {}) const;

  // The chat template source (tokenizer_config.json or GGUF), if any.
  const std::optional<std::string>& chat_template() const noexcept { return chat_template_; }
  // Special-token spellings named by the config ("bos_token", "eos_token").
  const std::string& bos_token() const noexcept { return bos_token_; }
  const std::string& eos_token() const noexcept { return eos_token_; }

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);
  ~Tokenizer();

 private:
  Tokenizer();
  static Tokenizer from_loaded(std::string_view json, const std::string& name,
                               const vocab::TokenizerConfig& cfg);
  friend class TokenizerImpl;
  std::shared_ptr<const Vocabulary> vocab_;
  std::shared_ptr<const TokenizerImpl> impl_;  // immutable; shared by copies
  std::optional<std::string> chat_template_;
  std::string bos_token_, eos_token_;
  std::string unsupported_;  // non-empty: the vocabulary loaded but encode() cannot run
};


}  // namespace nextok
