#include "nextok/tokenizer.hpp"

#include <deque>
#include <fstream>
#include <sstream>

#include "nextok/error.hpp"
#include "nextok/gguf.hpp"
#include "util/mapped_file.hpp"
#include "vocab/builder.hpp"
#include "vocab/config_json.hpp"
#include "vocab/hf_json.hpp"
#include "vocab/json_scan.hpp"
#include "vocab/tokenizer_impl.hpp"
#include "vocab/utf8.hpp"

namespace nextok {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_optional(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error(ErrorCode::kIo, "tokenizer", p.string() + ": read error");
  return std::move(ss).str();
}

std::shared_ptr<const util::MappedFile> map_file(const fs::path& p) {
  return util::MappedFile::open(p, "tokenizer file", "tokenizer");
}

struct Loaded {
  std::shared_ptr<const Vocabulary> vocab;
  std::shared_ptr<const TokenizerImpl> impl;
};

Loaded build_from(std::string_view json, const std::string& name, const vocab::TokenizerConfig& cfg,
                  bool with_encoder) {
  vocab::JsonStrings strings;
  const vocab::TokenizerSpec spec = vocab::parse_tokenizer_json(json, name, strings, with_encoder);
  Loaded l;
  l.vocab = VocabularyBuilder::build(spec, cfg.roles, name);
  if (with_encoder) l.impl = TokenizerImpl::build(spec, l.vocab, name);
  return l;
}

vocab::TokenizerConfig read_configs(const fs::path& dir) {
  vocab::TokenizerConfig cfg;
  if (auto t = read_optional(dir / "tokenizer_config.json")) {
    vocab::read_tokenizer_config(*t, (dir / "tokenizer_config.json").string(), cfg);
  }
  for (const char* f : {"generation_config.json", "config.json"}) {
    if (auto t = read_optional(dir / f))
      vocab::read_model_config(*t, (dir / f).string(), cfg.roles);
  }
  return cfg;
}

fs::path tokenizer_json_path(const fs::path& dir) {
  if (fs::is_regular_file(dir)) return dir;
  const fs::path p = dir / "tokenizer.json";
  if (!fs::exists(p)) {
    throw Error(ErrorCode::kIo, "tokenizer",
                dir.string() + ": no tokenizer.json here (pass a directory with tokenizer.json)");
  }
  return p;
}

bool is_gguf(const fs::path& p) {
  if (!fs::is_regular_file(p)) return false;
  std::ifstream f(p, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && std::string_view(magic, 4) == "GGUF";
}

}  // namespace

Tokenizer Tokenizer::from_path(const fs::path& path) {
  if (is_gguf(path)) return from_gguf(GgufFile::open(path));
  return from_dir(path);
}

std::shared_ptr<const Vocabulary> load_vocabulary(const fs::path& dir) {
  if (is_gguf(dir)) return Tokenizer::from_gguf(GgufFile::open(dir)).shared_vocab();
  const fs::path p = tokenizer_json_path(dir);
  const vocab::TokenizerConfig cfg = read_configs(p.parent_path());
  const auto file = map_file(p);
  return build_from(file->view(), p.string(), cfg, false).vocab;
}

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_loaded(std::string_view json, const std::string& name,
                                 const vocab::TokenizerConfig& cfg) {
  Loaded l = build_from(json, name, cfg, true);
  Tokenizer t;
  t.vocab_ = std::move(l.vocab);
  t.impl_ = std::move(l.impl);
  t.chat_template_ = cfg.chat_template;
  t.bos_token_ = cfg.bos_token;
  t.eos_token_ = cfg.eos_token;
  return t;
}

Tokenizer Tokenizer::from_dir(const fs::path& dir) {
  const fs::path p = tokenizer_json_path(dir);
  const auto file = map_file(p);
  return from_loaded(file->view(), p.string(), read_configs(p.parent_path()));
}

Tokenizer Tokenizer::from_json(std::string_view tokenizer_json, std::string_view config_json) {
  vocab::TokenizerConfig cfg;
  if (!config_json.empty()) vocab::read_tokenizer_config(config_json, "tokenizer_config.json", cfg);
  return from_loaded(tokenizer_json, "tokenizer.json", cfg);
}

std::vector<uint32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& opt) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 3 + 4);
  encode_into(text, out, opt);
  return out;
}

void Tokenizer::encode_into(std::string_view text, std::vector<uint32_t>& out,
                            const EncodeOptions& opt) const {
  if (!impl_) throw Error(ErrorCode::kUnsupported, "tokenizer", unsupported_);
  impl_->encode(text, out, opt);
}

std::string Tokenizer::decode(std::span<const uint32_t> ids, const DecodeOptions& opt) const {
  std::string out;
  const vocab::FirstToken first = impl_ ? impl_->decode_first() : vocab::FirstToken::kAsIs;
  bool seen_first = false;
  for (uint32_t id : ids) {
    if (id >= vocab_->size()) {
      throw Error(ErrorCode::kInvalidArgument, "ids",
                  "token id " + std::to_string(id) + " is outside the vocabulary (" +
                      std::to_string(vocab_->size()) + " ids)");
    }
    if (opt.skip_special && vocab_->is_special(id)) continue;
    const bool is_first = !seen_first;
    seen_first = true;
    if (is_first && first == vocab::FirstToken::kDropReplacements &&
        vocab_->kind(id) != TokenKind::kByte) {
      // HF's Metaspace decoder drops every "▁" of the first token.
      const std::string_view t = vocab_->text(id);
      for (size_t i = 0; i < t.size();) {
        if (t.substr(i).starts_with("\xE2\x96\x81")) {
          i += 3;
        } else {
          out += t[i++];
        }
      }
      continue;
    }
    out.append(vocab_->bytes(id));
  }
  if (first == vocab::FirstToken::kStripOneSpace && !out.empty() && out.front() == ' ') {
    out.erase(0, 1);
  }
  return out;
}

}  // namespace nextok
