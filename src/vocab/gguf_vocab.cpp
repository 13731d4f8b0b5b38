// Tokenizer::from_gguf: the tokenizer.ggml.* metadata mapped onto the same
// TokenizerSpec that tokenizer.json produces.
#include <deque>

#include "nextok/error.hpp"
#include "nextok/gguf.hpp"
#include "nextok/tokenizer.hpp"
#include "vocab/builder.hpp"
#include "vocab/spec.hpp"
#include "vocab/tokenizer_impl.hpp"

namespace nextok {

namespace {

using vocab::PreTokenizerStep;
using vocab::SplitBehavior;

constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kO200k =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

PreTokenizerStep split(const char* regex) {
  return {.kind = PreTokenizerStep::Kind::kSplit, .regex = regex};
}

// GGUF names the pre-tokenizer (tokenizer.ggml.pre) instead of storing it;
// these are the HF pre-tokenizers the names stand for. Unknown names leave
// the vocabulary usable but make encode() refuse.
bool pre_tokenizer_for(std::string_view pre, std::vector<PreTokenizerStep>& steps) {
  auto is = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names) {
      if (pre == n) return true;
    }
    return false;
  };
  if (is({"default", "gpt2", "gpt-2", "mpt", "olmo", "jais"})) {
    steps = {split(kGpt2)};
  } else if (is({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"})) {
    steps = {split(R"(\p{N})"), split(kGpt2)};  // Digits(individual) + ByteLevel
  } else if (is({"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"})) {
    steps = {split(kLlama3)};
  } else if (is({"qwen2", "deepseek-r1-qwen", "stablelm2"})) {
    steps = {split(kQwen2)};
  } else if (is({"gpt-4o", "o200k"})) {
    steps = {split(kO200k)};
  } else {
    return false;
  }
  return true;
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const GgufFile& gguf) {
  const std::string name = gguf.name();
  auto bad = [&](const std::string& what) {
    throw Error(ErrorCode::kMalformedFile, "tokenizer", name + ": " + what);
  };
  const auto model = gguf.get_string("tokenizer.ggml.model");
  if (!model) bad("no tokenizer.ggml.model: the file carries no tokenizer");
  const auto tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->empty()) bad("tokenizer.ggml.tokens is missing or empty");

  vocab::TokenizerSpec spec;
  std::string unsupported;
  if (*model == "gpt2") {
    spec.spelling = vocab::Spelling::kByteLevel;
  } else if (*model == "llama") {
    spec.spelling = vocab::Spelling::kSentencePiece;
    spec.byte_fallback = true;
    unsupported = "SentencePiece (tokenizer.ggml.model \"llama\") encoding is not supported yet";
  } else {
    throw Error(ErrorCode::kUnsupported, "tokenizer",
                name + ": tokenizer.ggml.model \"" + std::string(*model) +
                    "\" is not supported (supported: gpt2, llama)");
  }
  const auto types = gguf.get_int_array("tokenizer.ggml.token_type");
  if (types && types->size() != tokens->size()) {
    bad("tokenizer.ggml.token_type has " + std::to_string(types->size()) + " entries for " +
        std::to_string(tokens->size()) + " tokens");
  }
  spec.vocab.reserve(tokens->size());
  for (size_t id = 0; id < tokens->size(); ++id) {
    const int64_t type = types ? (*types)[id] : 1;
    // Control (3) and user-defined (4) tokens are matched in text like HF's
    // added tokens; control ones are special.
    if (type == 3 || type == 4) {
      vocab::AddedTokenSpec a;
      a.id = static_cast<uint32_t>(id);
      a.content = std::string((*tokens)[id]);
      a.special = type == 3;
      if (!a.content.empty()) spec.added.push_back(std::move(a));
    }
    spec.vocab.emplace_back((*tokens)[id], static_cast<uint32_t>(id));
    spec.gguf_token_types.push_back(static_cast<int32_t>(type));
  }
  if (auto merges = gguf.get_string_array("tokenizer.ggml.merges")) {
    spec.merges.reserve(merges->size());
    for (std::string_view m : *merges) {
      const size_t sp = m.find(' ');
      if (sp == std::string_view::npos || m.find(' ', sp + 1) != std::string_view::npos) {
        bad("tokenizer.ggml.merges entry \"" + std::string(m) +
            "\" is not two tokens separated by one space");
      }
      spec.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    }
  } else if (spec.spelling == vocab::Spelling::kByteLevel) {
    bad("a gpt2 tokenizer needs tokenizer.ggml.merges");
  }
  const std::string pre(gguf.get_string("tokenizer.ggml.pre").value_or("default"));
  if (spec.spelling == vocab::Spelling::kByteLevel && !pre_tokenizer_for(pre, spec.pre_tokenizer) &&
      unsupported.empty()) {
    unsupported = "pre-tokenizer \"" + pre + "\" (tokenizer.ggml.pre) is not supported";
  }

  SpecialRoles roles;
  auto id_of = [&](const char* key) -> std::optional<uint32_t> {
    const auto v = gguf.get_int(key);
    if (!v) return std::nullopt;
    if (*v < 0 || static_cast<uint64_t>(*v) >= tokens->size()) {
      bad(std::string(key) + " = " + std::to_string(*v) + " is outside the vocabulary");
    }
    return static_cast<uint32_t>(*v);
  };
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    if (auto id = id_of(key)) roles.eos_ids.push_back(*id);
  }
  roles.bos_id = id_of("tokenizer.ggml.bos_token_id");
  roles.pad_id = id_of("tokenizer.ggml.padding_token_id");
  roles.unk_id = id_of("tokenizer.ggml.unknown_token_id");

  Tokenizer t;
  t.vocab_ = VocabularyBuilder::build(spec, roles, name);
  if (unsupported.empty()) {
    t.impl_ = TokenizerImpl::build(spec, t.vocab_, name);
  } else {
    t.unsupported_ = name + ": " + unsupported;
  }
  if (auto tmpl = gguf.get_string("tokenizer.chat_template")) t.chat_template_ = std::string(*tmpl);
  if (roles.bos_id) t.bos_token_ = std::string(t.vocab_->text(*roles.bos_id));
  if (roles.eos_ids.size() > 0) t.eos_token_ = std::string(t.vocab_->text(roles.eos_ids[0]));
  return t;
}

}  // namespace nextok
