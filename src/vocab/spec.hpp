// What a tokenizer file says, before any table is built: the parsed form of
// tokenizer.json (or GGUF metadata) that the builders consume.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextok::vocab {

// How token spellings map to bytes.
enum class Spelling {
  kByteLevel,      // GPT-2 alphabet (Ġ for space): Qwen, Llama-3, gpt-oss, SmolLM2
  kSentencePiece,  // "▁" for space and <0xNN> byte-fallback tokens: Gemma, Llama-2
  kRaw,            // the spelling is the bytes (Vocabulary::from_token_bytes)
};

struct AddedTokenSpec {
  uint32_t id = 0;
  std::string content;
  // What HF's id_to_token gives, and so what decodes: the content, run
  // through the normalizer when `normalized`. Empty: the content.
  std::string spelling{};
  bool special = false;
  bool normalized = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
};

struct NormalizerStep {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kReplace, kPrepend };
  Kind kind;
  std::string pattern;  // kReplace: the literal to replace
  std::string content;  // kReplace / kPrepend: the replacement or prefix
};

enum class SplitBehavior { kIsolated, kMergedWithPrevious, kMergedWithNext, kRemoved, kContiguous };

// Metaspace's prepend_scheme: where "▁" goes before a piece.
enum class Prepend { kAlways, kFirst, kNever };

struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel, kMetaspace };
  Kind kind;
  std::string regex{};   // kSplit: a regex (PCRE2 syntax after translation)
  bool literal = false;  // kSplit: regex holds a plain string instead
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool add_prefix_space = false;  // kByteLevel
  bool invert = false;            // kSplit: the matches are the pieces, the rest delimiters
  // kMetaspace: spaces become `replacement`, one is prepended per
  // `prepend`, and with `split` each replacement starts a new piece.
  std::string replacement{};
  Prepend prepend = Prepend::kAlways;
  bool split = true;
};

// What the decoder does to the first token's spelling besides the usual
// mapping: nothing, drop one leading space (Strip after Fuse), or drop every
// replacement character in it (Metaspace, unless its prepend_scheme is
// never).
enum class FirstToken { kAsIs, kStripOneSpace, kDropReplacements };

struct TokenizerSpec {
  Spelling spelling = Spelling::kByteLevel;
  bool byte_fallback = false;
  bool ignore_merges = false;
  bool fuse_unk = false;
  std::optional<std::string> unk_token;
  FirstToken decode_first = FirstToken::kAsIs;
  // SentencePiece spelling: <0xNN> tokens decode to their byte only with a
  // ByteFallback decoder (HF); without one they are their text.
  bool decode_byte_fallback = true;
  // Model vocabulary and merges; the views point into the source buffer.
  std::vector<std::pair<std::string_view, uint32_t>> vocab;
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  std::vector<AddedTokenSpec> added;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  // Token types from GGUF (tokenizer.ggml.token_type), when known.
  std::vector<int32_t> gguf_token_types;
  size_t min_size = 0;  // ids below it exist even without a token (trailing holes)
};

}  // namespace nextok::vocab
