// Vocabulary: what every token id means as bytes, which ids are special, and
// which ids end a sequence. Immutable once built; share it across requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextok {

enum class TokenKind : uint8_t {
  kNormal,   // an ordinary model token
  kByte,     // a byte-fallback token such as <0x0A>: exactly one raw byte
  kAdded,    // an added token that is not special (Qwen3's <think>)
  kSpecial,  // an added token flagged special (control: <|im_end|>, <eos>)
  kAbsent,   // an id no file defines (a hole); it has no bytes
};

const char* token_kind_name(TokenKind kind) noexcept;

class VocabularyBuilder;

class Vocabulary {
 public:
  // A vocabulary from each id's decoded bytes, for callers that bring their
  // own tokenizer (an engine's vocabulary list): empty entries are holes,
  // `special_ids` are control tokens (their entry is their text), and
  // `eos_ids` end a sequence. Throws kInvalidArgument for an id outside.
  static std::shared_ptr<const Vocabulary> from_token_bytes(
      std::span<const std::string> tokens, std::span<const uint32_t> eos_ids,
      std::span<const uint32_t> special_ids = {});

  // Number of token ids: one more than the largest defined id.
  size_t size() const noexcept { return kinds_.size(); }

  // The raw bytes the token stands for when decoded (byte-level alphabet
  // undone, "▁" turned into a space, <0xNN> into its byte). Added and special
  // tokens give their content. Absent ids and ids >= size() give "".
  std::string_view bytes(uint32_t id) const noexcept {
    if (id >= size()) return {};
    return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  TokenKind kind(uint32_t id) const noexcept {
    return id < size() ? kinds_[id] : TokenKind::kAbsent;
  }
  bool is_special(uint32_t id) const noexcept { return kind(id) == TokenKind::kSpecial; }
  // The token's own spelling in the source file ("Ġhello", "▁the", "<0x0A>").
  std::string_view text(uint32_t id) const noexcept {
    if (id >= size()) return {};
    return std::string_view(text_arena_.data() + text_offsets_[id],
                            text_offsets_[id + 1] - text_offsets_[id]);
  }

  // Sorted and unique. Never empty for a loaded tokenizer that names an EOS.
  std::span<const uint32_t> eos_ids() const noexcept { return eos_ids_; }
  bool is_eos(uint32_t id) const noexcept;
  std::optional<uint32_t> bos_id() const noexcept { return bos_id_; }
  std::optional<uint32_t> pad_id() const noexcept { return pad_id_; }
  std::optional<uint32_t> unk_id() const noexcept { return unk_id_; }

  // Id of a token by its spelling (added tokens by content), if any.
  std::optional<uint32_t> find(std::string_view text) const;

  // A model's logits row may be wider than the tokenizer (Qwen3: 151,936
  // logits for 151,669 ids); the extra ids are absent.
  bool fits_logits_width(size_t width) const noexcept { return width >= size(); }

 private:
  friend class VocabularyBuilder;
  std::vector<TokenKind> kinds_;
  std::vector<uint32_t> offsets_;       // size()+1 offsets into arena_
  std::string arena_;                   // decoded bytes of every token
  std::vector<uint32_t> text_offsets_;  // size()+1 offsets into text_arena_
  std::string text_arena_;
  std::vector<uint32_t> eos_ids_;
  std::optional<uint32_t> bos_id_, pad_id_, unk_id_;
  // Open addressing over model spellings: (hash tag << 32) | id; ~0 = empty.
  std::vector<uint64_t> find_index_;
  std::vector<std::pair<std::string, uint32_t>> added_index_;  // sorted by content
};

}  // namespace nextok
