// The encoder tables behind nextok::Tokenizer: immutable once built.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "nextok/tokenizer.hpp"
#include "vocab/added_tokens.hpp"
#include "vocab/hash.hpp"
#include "vocab/pre_tokenizer.hpp"
#include "vocab/spec.hpp"

namespace nextok {

class TokenizerImpl {
 public:
  static std::shared_ptr<const TokenizerImpl> build(const vocab::TokenizerSpec& spec,
                                                    std::shared_ptr<const Vocabulary> vocab,
                                                    const std::string& name);

  void encode(std::string_view text, std::vector<uint32_t>& out, const EncodeOptions& opt) const;
  vocab::FirstToken decode_first() const noexcept { return decode_first_; }

 private:
  struct Scratch;

  // `at_start`: the segment begins the input text.
  void encode_segment(std::string_view segment, bool at_start, std::vector<uint32_t>& out,
                      Scratch& s) const;
  void encode_word(std::string_view word, std::vector<uint32_t>& out, Scratch& s) const;
  uint32_t char_id(std::string_view ch) const noexcept;

  std::shared_ptr<const Vocabulary> vocab_;
  vocab::Spelling spelling_ = vocab::Spelling::kByteLevel;
  bool byte_fallback_ = false, ignore_merges_ = false, fuse_unk_ = false;
  vocab::FirstToken decode_first_ = vocab::FirstToken::kAsIs;
  uint32_t unk_id_ = ~0u;
  vocab::PairTable merges_;
  std::array<uint32_t, 256> byte_ids_{};  // byte-level: id of each byte's letter;
                                          // SentencePiece: id of <0xNN>
  std::vector<uint32_t> bmp_ids_;         // SentencePiece: code point → id
  std::vector<vocab::NormalizerStep> normalizer_;
  vocab::PreTokenizer pre_;
  vocab::AddedTokenMatcher raw_added_;         // matched on the raw text
  vocab::AddedTokenMatcher normalized_added_;  // matched after normalization
};

}  // namespace nextok
