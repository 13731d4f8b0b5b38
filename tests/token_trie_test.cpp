// The token trie against brute force over every token of the real
// vocabularies, with automata that accept everything, a text's prefixes,
// and bytes outside a set.
#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <filesystem>
#include <string>

#include "constraint/trie/token_trie.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"

namespace {

using nextok::constraint::TokenTrie;

struct AcceptAll {
  bool step(const int&, uint8_t, int& next) const {
    next = 0;
    return true;
  }
};

// Accepts exactly the prefixes of `text`; the state is the position.
struct PrefixOf {
  std::string_view text;
  bool step(const size_t& at, uint8_t b, size_t& next) const {
    if (at >= text.size() || static_cast<uint8_t>(text[at]) != b) return false;
    next = at + 1;
    return true;
  }
};

// Rejects ASCII digits and quotes; accepts everything else.
struct NoDigitsOrQuotes {
  bool step(const int&, uint8_t b, int& next) const {
    next = 0;
    return !((b >= '0' && b <= '9') || b == '"');
  }
};

std::vector<uint32_t> brute(const nextok::Vocabulary& v, auto&& ok) {
  std::vector<uint32_t> mask(nextok::bitmask_words(v.size()), 0);
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (v.is_special(id) || v.bytes(id).empty()) continue;
    if (ok(v.bytes(id))) mask[id >> 5] |= 1u << (id & 31);
  }
  return mask;
}

TEST(TokenTrie, EqualsBruteForceOnTheSharedVocabularies) {
  int tested = 0;
  for (const char* name : {"qwen3", "llama3.1", "gemma3", "gpt-oss"}) {
#ifdef NEXTOK_TOKENIZERS_DIR
    const auto dir = std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / name;
#else
    const auto dir = std::filesystem::path("/nonexistent");
#endif
    if (!std::filesystem::exists(dir / "tokenizer.json")) {
      if (nextok::test::fixtures_required()) ADD_FAILURE() << "missing fixture: " << dir;
      continue;
    }
    const auto vocab = nextok::load_vocabulary(dir);
    const TokenTrie trie(*vocab);
    const size_t words = nextok::bitmask_words(vocab->size());

    std::vector<uint32_t> mask(words, 0);
    trie.allow(AcceptAll{}, 0, mask);
    EXPECT_EQ(mask, brute(*vocab, [](std::string_view) { return true; })) << name;

    const std::string text = "{\"name\": \"nextok\", \"tokens\": [12, 3456], \"ok\": true}";
    for (size_t from = 0; from < text.size(); from += 7) {
      const std::string_view rest = std::string_view(text).substr(from);
      std::fill(mask.begin(), mask.end(), 0);
      trie.allow(PrefixOf{rest}, size_t{0}, mask);
      EXPECT_EQ(mask, brute(*vocab, [&](std::string_view b) { return rest.starts_with(b); }))
          << name << " at " << from;
    }

    std::fill(mask.begin(), mask.end(), 0);
    trie.allow(NoDigitsOrQuotes{}, 0, mask);
    EXPECT_EQ(mask, brute(*vocab,
                          [](std::string_view b) {
                            return b.find_first_of("0123456789\"") == std::string_view::npos;
                          }))
        << name;
    ++tested;
  }
  NEXTOK_REQUIRE_FIXTURE(tested > 0, "the shared tokenizers in the build tree");
}

TEST(TokenTrie, DepthFirstLayoutAndSharedBytes) {
  const char* json =
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "abc": 3, "c": 6},
    "merges": ["a b", "ab c"]}, "decoder": {"type": "ByteLevel"},
    "added_tokens": [{"id": 4, "content": "ab", "special": false},
                     {"id": 5, "content": "<s>", "special": true}]})";
  const auto tok = nextok::Tokenizer::from_json(json);
  const TokenTrie trie(tok.vocab());
  // root, a, ab, abc, b, c: "ab" carries ids 2 and 4; the special <s> is left out.
  ASSERT_EQ(trie.nodes().size(), 6u);
  EXPECT_EQ(trie.nodes()[0].end, 6u);
  EXPECT_EQ(trie.nodes()[1].byte, 'a');
  EXPECT_EQ(trie.nodes()[1].end, 4u);
  EXPECT_EQ(trie.nodes()[2].token_count, 2);
  EXPECT_EQ(trie.tokens()[trie.nodes()[2].first_token], 2u);
  EXPECT_EQ(trie.tokens()[trie.nodes()[2].first_token + 1], 4u);
  EXPECT_EQ(trie.nodes()[4].byte, 'b');
  EXPECT_EQ(trie.nodes()[5].byte, 'c');
  EXPECT_EQ(trie.nodes()[5].depth, 1);
  EXPECT_EQ(trie.max_depth(), 3u);
}

}  // namespace
