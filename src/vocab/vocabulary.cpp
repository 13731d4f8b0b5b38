#include <algorithm>
#include <cstring>
#include <thread>

#include "nextok/error.hpp"
#include "vocab/builder.hpp"
#include "vocab/byte_level.hpp"
#include "vocab/hash.hpp"

namespace nextok {

using vocab::Spelling;

const char* token_kind_name(TokenKind kind) noexcept {
  switch (kind) {
    case TokenKind::kNormal:
      return "normal";
    case TokenKind::kByte:
      return "byte";
    case TokenKind::kAdded:
      return "added";
    case TokenKind::kSpecial:
      return "special";
    case TokenKind::kAbsent:
      return "absent";
  }
  return "unknown";
}

bool Vocabulary::is_eos(uint32_t id) const noexcept {
  return std::binary_search(eos_ids_.begin(), eos_ids_.end(), id);
}

namespace {

constexpr uint32_t kNoId = ~0u;
constexpr uint64_t kEmptySlot = ~uint64_t{0};

// <0xNN> → NN, or -1.
int byte_fallback_value(std::string_view t) noexcept {
  if (t.size() != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// The bytes a decoder produces for one token spelling.
void decode_spelling(Spelling spelling, bool byte_fallback, std::string_view text,
                     std::string& out) {
  if (spelling == Spelling::kRaw) {
    out.append(text);
    return;
  }
  if (spelling == Spelling::kByteLevel) {
    // HF's ByteLevel decoder keeps a token's UTF-8 when a character falls
    // outside the alphabet.
    if (!vocab::from_byte_level(text, out)) out.append(text);
    return;
  }
  if (const int b = byte_fallback ? byte_fallback_value(text) : -1; b >= 0) {
    out.push_back(static_cast<char>(b));
    return;
  }
  constexpr std::string_view kSpace = "\xE2\x96\x81";  // ▁
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = text.find(kSpace, i);
    if (j == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, j - i));
    out.push_back(' ');
    i = j + kSpace.size();
  }
}

}  // namespace

std::shared_ptr<Vocabulary> VocabularyBuilder::build(const vocab::TokenizerSpec& spec,
                                                     const SpecialRoles& roles,
                                                     const std::string& name) {
  auto fail = [&](const std::string& what) -> void {
    throw Error(ErrorCode::kMalformedFile, "tokenizer", name + ": " + what);
  };
  size_t size = 0;
  for (const auto& [text, id] : spec.vocab) size = std::max<size_t>(size, size_t{id} + 1);
  for (const auto& a : spec.added) size = std::max<size_t>(size, size_t{a.id} + 1);
  size = std::max(size, spec.min_size);
  if (size == 0) fail("the vocabulary is empty");

  // id → spelling: model tokens first, added tokens override (HF looks the
  // added vocabulary up first).
  std::vector<std::string_view> spelling(size);
  std::vector<TokenKind> kinds(size, TokenKind::kAbsent);
  for (const auto& [text, id] : spec.vocab) {
    if (kinds[id] != TokenKind::kAbsent) {
      fail("token id " + std::to_string(id) + " appears twice in model.vocab (\"" +
           std::string(spelling[id]) + "\" and \"" + std::string(text) + "\")");
    }
    spelling[id] = text;
    kinds[id] = spec.spelling == Spelling::kSentencePiece && spec.decode_byte_fallback &&
                        byte_fallback_value(text) >= 0
                    ? TokenKind::kByte
                    : TokenKind::kNormal;
  }
  for (const auto& a : spec.added) {
    spelling[a.id] = a.content;
    kinds[a.id] = a.special ? TokenKind::kSpecial : TokenKind::kAdded;
  }
  if (!spec.gguf_token_types.empty()) {
    // GGUF: 3 = control, 4 = user-defined, 6 = byte.
    for (size_t id = 0; id < size && id < spec.gguf_token_types.size(); ++id) {
      const int32_t t = spec.gguf_token_types[id];
      if (t == 3) kinds[id] = TokenKind::kSpecial;
      if (t == 4) kinds[id] = TokenKind::kAdded;
      if (t == 6 && spec.spelling == Spelling::kSentencePiece) kinds[id] = TokenKind::kByte;
    }
  }

  auto v = std::make_shared<Vocabulary>();
  v->kinds_ = std::move(kinds);

  // The spelling index and the two arenas are independent: build the index
  // on a second thread (table building is bound by cache misses).
  std::string index_error;
  std::thread index_thread([&] {
    const size_t n_model = spec.vocab.size();
    std::vector<uint64_t> hashes(n_model);
    for (size_t k = 0; k < n_model; ++k) hashes[k] = vocab::hash_bytes(spec.vocab[k].first);
    v->find_index_.assign(vocab::table_capacity(n_model), kEmptySlot);
    const size_t mask = v->find_index_.size() - 1;
    constexpr size_t kAhead = 16;
    for (size_t k = 0; k < n_model; ++k) {
      if (k + kAhead < n_model) __builtin_prefetch(&v->find_index_[hashes[k + kAhead] & mask], 1);
      const auto& [text, id] = spec.vocab[k];
      if (spelling[id] != text) continue;  // overridden by a different added token
      const uint64_t tag = hashes[k] >> 32;
      for (size_t i = hashes[k] & mask;; i = (i + 1) & mask) {
        const uint64_t cur = v->find_index_[i];
        if (cur == kEmptySlot) {
          v->find_index_[i] = (tag << 32) | id;
          break;
        }
        if ((cur >> 32) == tag && spelling[static_cast<uint32_t>(cur)] == text) {
          // Raw bytes may repeat (a byte token beside the same character):
          // the first id is the one find() names.
          if (spec.spelling == Spelling::kRaw) break;
          index_error = "token \"" + std::string(text) + "\" appears twice in model.vocab (ids " +
                        std::to_string(static_cast<uint32_t>(cur)) + " and " + std::to_string(id) +
                        ")";
          return;
        }
      }
    }
  });
  v->offsets_.resize(size + 1);
  v->text_offsets_.resize(size + 1);
  size_t text_bytes = 0;
  for (auto s : spelling) text_bytes += s.size();
  v->text_arena_.reserve(text_bytes);
  v->arena_.reserve(text_bytes);
  for (size_t id = 0; id < size; ++id) {
    v->offsets_[id] = static_cast<uint32_t>(v->arena_.size());
    v->text_offsets_[id] = static_cast<uint32_t>(v->text_arena_.size());
    v->text_arena_.append(spelling[id]);
    if (v->kinds_[id] != TokenKind::kAbsent)
      decode_spelling(spec.spelling, spec.decode_byte_fallback, spelling[id], v->arena_);
  }
  // A normalized added token decodes from its normalized form (HF's
  // id_to_token), while its text stays the content that finds it.
  bool renormalized = false;
  for (const auto& a : spec.added) renormalized |= !a.spelling.empty();
  if (renormalized) {
    v->offsets_[size] = static_cast<uint32_t>(v->arena_.size());
    std::vector<std::string_view> decoded(size);
    for (size_t id = 0; id < size; ++id) decoded[id] = v->bytes(static_cast<uint32_t>(id));
    std::vector<std::string> owned;
    owned.reserve(spec.added.size());
    for (const auto& a : spec.added) {
      if (a.spelling.empty()) continue;
      decode_spelling(spec.spelling, spec.decode_byte_fallback, a.spelling, owned.emplace_back());
      decoded[a.id] = owned.back();
    }
    std::string arena;
    for (size_t id = 0; id < size; ++id) {
      v->offsets_[id] = static_cast<uint32_t>(arena.size());
      arena.append(decoded[id]);
    }
    v->offsets_[size] = static_cast<uint32_t>(arena.size());
    v->arena_ = std::move(arena);
  }
  v->offsets_[size] = static_cast<uint32_t>(v->arena_.size());
  v->text_offsets_[size] = static_cast<uint32_t>(v->text_arena_.size());
  index_thread.join();
  if (!index_error.empty()) fail(index_error);
  for (const auto& a : spec.added) v->added_index_.emplace_back(a.content, a.id);
  std::sort(v->added_index_.begin(), v->added_index_.end());

  // Special roles: explicit ids win, then spellings from tokenizer_config.
  auto resolve = [&](const std::optional<uint32_t>& id, const std::optional<std::string>& text,
                     const char* role) -> std::optional<uint32_t> {
    // A spelling from tokenizer_config.json wins over a bare id.
    if (text) {
      auto found = v->find(*text);
      if (!found) {
        throw Error(ErrorCode::kMalformedFile, role,
                    name + ": " + role + " \"" + *text + "\" is not a token of the vocabulary");
      }
      return found;
    }
    if (id) {
      if (*id >= size) {
        throw Error(ErrorCode::kMalformedFile, role,
                    name + ": " + role + " id " + std::to_string(*id) +
                        " is outside the vocabulary (" + std::to_string(size) + " ids)");
      }
      return id;
    }
    return std::nullopt;
  };
  v->bos_id_ = resolve(roles.bos_id, roles.bos_token, "bos_token");
  v->pad_id_ = resolve(roles.pad_id, roles.pad_token, "pad_token");
  v->unk_id_ = resolve(roles.unk_id, roles.unk_token, "unk_token");
  for (uint32_t id : roles.eos_ids) {
    v->eos_ids_.push_back(*resolve(id, std::nullopt, "eos_token_id"));
  }
  for (const auto& t : roles.eos_tokens) {
    v->eos_ids_.push_back(*resolve(std::nullopt, t, "eos_token"));
  }
  std::sort(v->eos_ids_.begin(), v->eos_ids_.end());
  v->eos_ids_.erase(std::unique(v->eos_ids_.begin(), v->eos_ids_.end()), v->eos_ids_.end());
  return v;
}

std::optional<uint32_t> VocabularyBuilder::find_model(const Vocabulary& v,
                                                      std::string_view text) noexcept {
  if (v.find_index_.empty()) return std::nullopt;
  const size_t mask = v.find_index_.size() - 1;
  const uint64_t h = vocab::hash_bytes(text);
  const uint64_t tag = h >> 32;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t cur = v.find_index_[i];
    if (cur == kEmptySlot) return std::nullopt;
    if ((cur >> 32) == tag && v.text(static_cast<uint32_t>(cur)) == text) {
      return static_cast<uint32_t>(cur);
    }
  }
}

void VocabularyBuilder::find_model_batch(const Vocabulary& v,
                                         std::span<const std::string_view> texts,
                                         std::span<uint32_t> out) noexcept {
  constexpr size_t kBlock = 32;
  uint64_t h[kBlock];
  const size_t mask = v.find_index_.empty() ? 0 : v.find_index_.size() - 1;
  for (size_t base = 0; base < texts.size(); base += kBlock) {
    const size_t n = std::min(kBlock, texts.size() - base);
    for (size_t k = 0; k < n; ++k) {
      h[k] = vocab::hash_bytes(texts[base + k]);
      __builtin_prefetch(&v.find_index_[h[k] & mask]);
    }
    // First probe of each: prefetch the candidate's spelling offsets.
    for (size_t k = 0; k < n; ++k) {
      const uint64_t cur = v.find_index_[h[k] & mask];
      if (cur != kEmptySlot) __builtin_prefetch(&v.text_offsets_[static_cast<uint32_t>(cur)]);
    }
    for (size_t k = 0; k < n; ++k) {
      const std::string_view text = texts[base + k];
      const uint64_t tag = h[k] >> 32;
      uint32_t found = kNoId;
      for (size_t i = h[k] & mask;; i = (i + 1) & mask) {
        const uint64_t cur = v.find_index_[i];
        if (cur == kEmptySlot) break;
        if ((cur >> 32) == tag && v.text(static_cast<uint32_t>(cur)) == text) {
          found = static_cast<uint32_t>(cur);
          break;
        }
      }
      out[base + k] = found;
    }
  }
}

std::shared_ptr<const Vocabulary> Vocabulary::from_token_bytes(
    std::span<const std::string> tokens, std::span<const uint32_t> eos_ids,
    std::span<const uint32_t> special_ids) {
  const auto outside = [&](uint32_t id, const char* what) {
    throw Error(ErrorCode::kInvalidArgument, what,
                std::string(what) + " id " + std::to_string(id) + " is outside the " +
                    std::to_string(tokens.size()) + " tokens");
  };
  if (tokens.size() >= (size_t{1} << 31)) {
    throw Error(ErrorCode::kInvalidArgument, "tokens", "more than 2^31 tokens");
  }
  std::vector<bool> special(tokens.size(), false);
  for (uint32_t id : special_ids) {
    if (id >= tokens.size()) outside(id, "special");
    special[id] = true;
  }
  vocab::TokenizerSpec spec;
  spec.spelling = Spelling::kRaw;
  spec.min_size = tokens.size();
  for (uint32_t id = 0; id < tokens.size(); ++id) {
    if (special[id]) {
      spec.added.push_back({.id = id, .content = tokens[id], .special = true});
    } else if (!tokens[id].empty()) {
      spec.vocab.emplace_back(tokens[id], id);
    }
  }
  SpecialRoles roles;
  for (uint32_t id : eos_ids) {
    if (id >= tokens.size()) outside(id, "eos");
    roles.eos_ids.push_back(id);
  }
  return VocabularyBuilder::build(spec, roles, "token bytes");
}

std::optional<uint32_t> Vocabulary::find(std::string_view text) const {
  auto it = std::lower_bound(added_index_.begin(), added_index_.end(), text,
                             [](const auto& e, std::string_view t) { return e.first < t; });
  if (it != added_index_.end() && it->first == text) return it->second;
  return VocabularyBuilder::find_model(*this, text);
}

}  // namespace nextok
