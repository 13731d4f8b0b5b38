// Tokenizer loading, BPE merging, UTF-8 streaming and error reporting on
// small hand-written files, plus the real shared tokenizers when present.
#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "nextok/error.hpp"
#include "nextok/tokenizer.hpp"
#include "vocab/bpe.hpp"
#include "vocab/regex.hpp"
#include "vocab/utf8.hpp"

namespace {

using nextok::ErrorCode;
using nextok::Tokenizer;

// A byte-level BPE with merges a+b, ab+c, Ġ+a.
const char* kTiny = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 7, "content": "<|end|>", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false},
    {"id": 8, "content": "<t>", "special": false, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                    "use_regex": true},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "\u0120": 5, "\u0120a": 6},
            "merges": ["a b", ["ab", "c"], "\u0120 a"]}
})";

nextok::Error error_of(std::string_view json) {
  try {
    (void)Tokenizer::from_json(json);
  } catch (const nextok::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << json.substr(0, 200);
  return nextok::Error(ErrorCode::kInvalidArgument, "", "none");
}

TEST(Tokenizer, TinyByteLevelEncodeDecode) {
  const Tokenizer t = Tokenizer::from_json(kTiny);
  EXPECT_EQ(t.vocab().size(), 9u);
  EXPECT_EQ(t.encode("abc ab a"), (std::vector<uint32_t>{4, 5, 3, 6}));
  EXPECT_EQ(t.vocab().bytes(5), " ");
  EXPECT_EQ(t.vocab().kind(7), nextok::TokenKind::kSpecial);
  EXPECT_EQ(t.vocab().kind(8), nextok::TokenKind::kAdded);
  // Special tokens are parsed by default and can be turned into text.
  EXPECT_EQ(t.encode("ab<|end|>"), (std::vector<uint32_t>{3, 7}));
  nextok::EncodeOptions plain;
  plain.parse_special = false;
  const auto ids = t.encode("a<|end|>", plain);
  EXPECT_EQ(std::find(ids.begin(), ids.end(), 7u), ids.end());
  // Non-special added tokens are always recognised, as in HF.
  EXPECT_EQ(t.encode("a<t>", plain), (std::vector<uint32_t>{0, 8}));
  const std::vector<uint32_t> round = {4, 5, 3, 7};
  EXPECT_EQ(t.decode(round), "abc ab<|end|>");
  EXPECT_EQ(t.decode(round, {.skip_special = true}), "abc ab");
}

TEST(Tokenizer, RejectsInvalidUtf8Text) {
  const Tokenizer t = Tokenizer::from_json(kTiny);
  try {
    (void)t.encode("a\xC3(");
    FAIL();
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos);
  }
}

TEST(Tokenizer, EveryTruncationIsAMalformedFileError) {
  const std::string full = kTiny;
  for (size_t n = 0; n + 1 < full.size(); ++n) {
    // Cutting inside trailing whitespace leaves a valid document.
    if (full.find_first_not_of(" \n", n) == std::string::npos) break;
    const nextok::Error e = error_of(full.substr(0, n));
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile) << "prefix " << n << ": " << e.what();
  }
}

TEST(Tokenizer, ErrorsNameTheProblem) {
  struct Case {
    std::string json;
    ErrorCode code;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})", ErrorCode::kUnsupported,
       "WordPiece"},
      {R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})", ErrorCode::kUnsupported,
       "Unigram"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a c"]},
          "decoder": {"type": "ByteLevel"}})",
       ErrorCode::kMalformedFile, "not in model.vocab"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []},
          "decoder": {"type": "ByteLevel"}})",
       ErrorCode::kMalformedFile, "appears twice"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]},
          "decoder": {"type": "ByteLevel"}})",
       ErrorCode::kMalformedFile, "two tokens"},
      {R"({"added_tokens": []})", ErrorCode::kMalformedFile, "no \"model\""},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})", ErrorCode::kUnsupported,
       "decoder"},
      {R"({"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})", ErrorCode::kMalformedFile,
       "token id"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "pre_tokenizer": {"type": "UnicodeScripts"}, "decoder": {"type": "ByteLevel"}})",
       ErrorCode::kUnsupported, "UnicodeScripts"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1},
          "decoder": {"type": "ByteLevel"}})",
       ErrorCode::kUnsupported, "dropout"},
      {R"({"model": {"type": "BPE", "vocab": {"\ud800": 0}}})", ErrorCode::kMalformedFile,
       "surrogate"},
      {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\xff\": 0}}}", ErrorCode::kMalformedFile,
       "UTF-8"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "decoder": {"type": "ByteLevel"}} trailing)",
       ErrorCode::kMalformedFile, "trailing"},
      {R"([1, 2])", ErrorCode::kMalformedFile, "object"},
  };
  for (const Case& c : cases) {
    const nextok::Error e = error_of(c.json);
    EXPECT_EQ(e.code(), c.code) << c.json << "\n" << e.what();
    EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos)
        << "'" << c.needle << "' not in: " << e.what();
  }
}

TEST(Tokenizer, MissingDirectoryIsAnIoError) {
  try {
    (void)Tokenizer::from_path("/nonexistent/nextok-tokenizer");
    FAIL();
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos);
  }
}

TEST(Bpe, ScanAndHeapMergeIdentically) {
  // Random merge tables over a small alphabet; ranks and results random, so
  // ties, re-merges and long words are all exercised.
  std::mt19937 mt(11);
  auto rng = [&mt] { return static_cast<uint32_t>(mt()); };
  for (int table = 0; table < 40; ++table) {
    nextok::vocab::PairTable merges;
    merges.reserve(200);
    for (uint32_t r = 0; r < 150; ++r) {
      merges.insert(rng() % 12, rng() % 12, rng() % 1000, rng() % 12);
    }
    for (int w = 0; w < 50; ++w) {
      std::vector<uint32_t> word(1 + rng() % 150);
      for (auto& x : word) x = rng() % 12;
      auto a = word, b = word;
      nextok::vocab::bpe_merge_scan(merges, a);
      nextok::vocab::bpe_merge_heap(merges, b);
      ASSERT_EQ(a, b) << "table " << table << " word " << w;
    }
  }
}

TEST(Utf8, CompletePrefixHoldsBackOnlyUnfinishedCharacters) {
  using nextok::vocab::utf8_complete_prefix;
  EXPECT_EQ(utf8_complete_prefix("abc"), 3u);
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F"), 1u);      // 2 of 4 bytes of an emoji
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x98"), 1u);  // 3 of 4
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x98\x80"), 5u);
  EXPECT_EQ(utf8_complete_prefix("a\xC3"), 1u);
  EXPECT_EQ(utf8_complete_prefix("a\xFF"), 2u);      // never valid: emit now
  EXPECT_EQ(utf8_complete_prefix("a\xE0\x80"), 3u);  // overlong start: emit now
}

TEST(Utf8, ReplacementFollowsMaximalSubparts) {
  std::string out;
  nextok::vocab::utf8_append_replacing(
      "a\xF0\x9F\x98"
      "b\xFF"
      "c\xED\xA0\x80",
      out);
  // Python: b'a\xf0\x9f\x98b\xffc\xed\xa0\x80'.decode('utf-8', 'replace')
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Regex, TranslatesOnigurumaWhitespace) {
  using nextok::vocab::Regex;
  EXPECT_EQ(Regex::translate("a"), "a");
  EXPECT_NE(Regex::translate(R"(\s+)").find("\\x{3000}"), std::string::npos);
  EXPECT_NE(Regex::translate(R"([^\s\p{L}])").find("[^\\t"), std::string::npos);
  const Regex re(R"(\s+(?!\S)|\s+)");
  size_t b = 0, e = 0;
  const std::string text = "x\xC2\x85\xC2\x85y";  // U+0085 is White_Space in Oniguruma
  ASSERT_TRUE(re.find(text, 0, b, e));
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(e, 3u);  // the lookahead leaves the last space for the next word
}

std::filesystem::path shared_tokenizer(const char* name) {
#ifdef NEXTOK_TOKENIZERS_DIR
  return std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / name;
#else
  return std::filesystem::path("/nonexistent") / name;
#endif
}

TEST(StreamDecoder, HoldsPartialCharactersAcrossByteTokens) {
  const auto dir = shared_tokenizer("gemma3");
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(dir / "tokenizer.json"), dir);
  const Tokenizer t = Tokenizer::from_dir(dir);
  const auto& v = t.vocab();
  // Gemma spells rare characters with <0xNN> byte tokens.
  std::vector<uint32_t> bytes;
  for (const char* b : {"<0xF0>", "<0x9F>", "<0xA6>", "<0x80>"}) bytes.push_back(*v.find(b));
  nextok::StreamDecoder d(t.shared_vocab());
  EXPECT_EQ(d.push(*v.find("▁a")), " a");
  EXPECT_EQ(d.push(bytes[0]), "");
  EXPECT_EQ(d.push(bytes[1]), "");
  EXPECT_EQ(d.pending_bytes(), 2u);
  EXPECT_EQ(d.push(bytes[2]), "");
  EXPECT_EQ(d.push(bytes[3]), "\xF0\x9F\xA6\x80");
  EXPECT_EQ(d.push(bytes[0]), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");
}

TEST(SharedTokenizers, RoundTripAndEos) {
  struct Expect {
    const char* name;
    size_t size;
    uint32_t eos;
  };
  for (const Expect& x : {Expect{"qwen3", 151669, 151645}, Expect{"llama3.1", 128256, 128009},
                          Expect{"gemma3", 262145, 106}, Expect{"gpt-oss", 200019, 200002}}) {
    const auto dir = shared_tokenizer(x.name);
    NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(dir / "tokenizer.json"), dir);
    const Tokenizer t = Tokenizer::from_dir(dir);
    EXPECT_EQ(t.vocab().size(), x.size) << x.name;
    EXPECT_TRUE(t.vocab().is_eos(x.eos)) << x.name;
    EXPECT_TRUE(t.vocab().fits_logits_width(x.size + 267));
    const std::string text = "Hello, wörld! 東京 👨‍👩‍👧 1234567 \n\n\t  x";
    EXPECT_EQ(t.decode(t.encode(text)), text) << x.name;
  }
}

}  // namespace

namespace {

void write(const std::filesystem::path& p, std::string_view text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST(TokenizerConfigs, EosIsTheUnionOfEveryConfigIntOrArray) {
  const auto dir = std::filesystem::temp_directory_path() / "nextok-eos-test";
  std::filesystem::create_directories(dir);
  write(dir / "tokenizer.json", kTiny);
  write(dir / "tokenizer_config.json",
        R"({"eos_token": {"content": "<|end|>", "special": true}, "bos_token": null,
            "pad_token": "a", "model_max_length": 1000000000000000019884624838656,
            "chat_template": [{"name": "tool_use", "template": "x"},
                              {"name": "default", "template": "{{ bos_token }}"}]})");
  write(dir / "generation_config.json", R"({"eos_token_id": [2, 7], "bos_token_id": 0})");
  write(dir / "config.json", R"({"eos_token_id": 1, "pad_token_id": null})");
  const Tokenizer t = Tokenizer::from_dir(dir);
  const auto eos = t.vocab().eos_ids();
  EXPECT_EQ(std::vector<uint32_t>(eos.begin(), eos.end()), (std::vector<uint32_t>{1, 2, 7}));
  EXPECT_EQ(t.vocab().bos_id(), std::optional<uint32_t>(0));
  EXPECT_EQ(t.vocab().pad_id(), std::optional<uint32_t>(0));
  EXPECT_EQ(t.eos_token(), "<|end|>");
  EXPECT_EQ(t.chat_template(), std::optional<std::string>("{{ bos_token }}"));

  write(dir / "config.json", R"({"eos_token_id": 99})");
  try {
    (void)Tokenizer::from_dir(dir);
    FAIL();
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile);
    EXPECT_NE(std::string(e.what()).find("outside the vocabulary"), std::string::npos);
  }
  write(dir / "config.json", R"({"eos_token_id": "x"})");
  try {
    (void)Tokenizer::from_dir(dir);
    FAIL();
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile);
    EXPECT_EQ(e.param(), "eos_token_id");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

TEST(Tokenizer, MergesReadAheadSurvivesADecoyKey) {
  // The merges are read ahead from the first `"merges": [` in the file; a
  // decoy before the model must not change the result.
  std::string decoy = kTiny;
  decoy.insert(decoy.find("\"normalizer\""), R"("post_processor": {"merges": ["b a", 1]}, )");
  const Tokenizer a = Tokenizer::from_json(kTiny);
  const Tokenizer b = Tokenizer::from_json(decoy);
  EXPECT_EQ(a.encode("abc ab a"), b.encode("abc ab a"));
  EXPECT_EQ(b.encode("abc ab a"), (std::vector<uint32_t>{4, 5, 3, 6}));
  // A decoy that is itself malformed is not the model's problem either.
  std::string bad = kTiny;
  bad.insert(bad.find("\"normalizer\""), R"("post_processor": {"merges": [1, 2 ,]}, )");
  EXPECT_EQ(error_of(bad).code(), ErrorCode::kMalformedFile);
}

}  // namespace
