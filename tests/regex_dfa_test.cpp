// The regex → DFA compiler against PCRE2 on random strings, its ECMA-262
// classes, its errors, and together with the token trie against brute force.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <gtest/gtest.h>
#include <pcre2.h>

#include <filesystem>
#include <random>
#include <string>

#include "constraint/regex/dfa.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"

namespace {

using nextok::constraint::Dfa;

bool pcre2_full_match(const std::string& pattern, const std::string& text) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &err, &off, nullptr);
  EXPECT_NE(code, nullptr) << pattern;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  const int rc =
      pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, md, nullptr);
  pcre2_match_data_free(md);
  pcre2_code_free(code);
  return rc >= 0;
}

TEST(RegexDfa, FullMatchEqualsPcre2OnRandomStrings) {
  const std::vector<std::string> patterns = {
      "a(b|c)*d", "[a-c]{2,4}x?",  "[^a]+",         ".*é.",        "\\d{3}-\\d{2}", "(ab|a)(bc|c)",
      "[α-ω]+1?", "x{0,3}y{2}",    "(?:a|b)+c",     "[😀-😂]|ab",    "(a|)*b",        "a{2,}",
      "[\\d-]+",  "\\w+\\W?",      "((a|b)(c|d))*", "[^\\d\\n]*x", "é{1,2}[^é]",    "",
      "a|b|",     "(x|xy)(y|yy)?", "[a\\-z]+",      "\\x41b",      "a{,2}",
  };
  const std::vector<std::string> alphabet = {"a", "b", "c", "d", "x",  "y", "1", "2", "-",
                                             "é", "α", "ω", "😀", "\n", "A", "]", "{", ","};
  std::mt19937 rng(3);
  for (const std::string& p : patterns) {
    const Dfa dfa = Dfa::compile(p);
    for (int k = 0; k < 3000; ++k) {
      std::string s;
      const size_t len = rng() % 9;
      for (size_t i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
      ASSERT_EQ(dfa.matches(s), pcre2_full_match(p, s)) << "pattern " << p << " text " << s;
    }
  }
}

TEST(RegexDfa, EcmaSyntax) {
  EXPECT_TRUE(Dfa::compile("\\u00e9\\u{1F600}").matches("é😀"));
  EXPECT_FALSE(Dfa::compile("[]a]").matches("a]"));  // [] is the empty class
  EXPECT_TRUE(Dfa::compile("[^]").matches("\n"));
  EXPECT_TRUE(Dfa::compile("a{").matches("a{"));  // Annex B: a literal brace
}

TEST(RegexDfa, SearchSemanticsAndAnchors) {
  nextok::constraint::RegexOptions search;
  search.full_match = false;
  const Dfa d = Dfa::compile("b+c", search);
  EXPECT_TRUE(d.matches("abbcd"));
  EXPECT_FALSE(d.matches("abd"));
  const Dfa anchored = Dfa::compile("^b+c$", search);
  EXPECT_TRUE(anchored.matches("bbc"));
  EXPECT_FALSE(anchored.matches("abbc"));
  EXPECT_FALSE(anchored.matches("bbcd"));
}

TEST(RegexDfa, EcmaClassesAndDeadStates) {
  const Dfa s = Dfa::compile("\\s+");
  EXPECT_TRUE(s.matches(" \t\xC2\xA0\xE3\x80\x80\xEF\xBB\xBF"));  // NBSP, ideographic space, BOM
  EXPECT_FALSE(s.matches("\xC2\x85"));                            // U+0085 is not ECMA whitespace
  const Dfa dot = Dfa::compile(".");
  EXPECT_FALSE(dot.matches("\r"));
  EXPECT_FALSE(dot.matches("\xE2\x80\xA8"));
  EXPECT_TRUE(dot.matches("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(dot.matches("\xED\xA0\x80"));  // a surrogate is not UTF-8
  // A byte after which nothing can match is dead at once.
  const Dfa ab = Dfa::compile("ab");
  EXPECT_EQ(ab.next(ab.next(ab.start(), 'a'), 'c'), Dfa::kDead);
  const Dfa never = Dfa::compile("[^\\s\\S]");
  EXPECT_EQ(never.start(), Dfa::kDead);
}

TEST(RegexDfa, ErrorsAreTypedAndPointAtTheProblem) {
  struct Case {
    const char* pattern;
    nextok::ErrorCode code;
  };
  for (const Case& c : {Case{"(a", nextok::ErrorCode::kInvalidArgument},
                        Case{"a)", nextok::ErrorCode::kInvalidArgument},
                        Case{"[a", nextok::ErrorCode::kInvalidArgument},
                        Case{"*a", nextok::ErrorCode::kInvalidArgument},
                        Case{"[z-a]", nextok::ErrorCode::kInvalidArgument},
                        Case{"a{3,1}", nextok::ErrorCode::kInvalidArgument},
                        Case{"(a)\\1", nextok::ErrorCode::kUnsupported},
                        Case{"(?=a)", nextok::ErrorCode::kUnsupported},
                        Case{"a\\b", nextok::ErrorCode::kUnsupported},
                        Case{"a^b", nextok::ErrorCode::kUnsupported}}) {
    try {
      (void)Dfa::compile(c.pattern);
      ADD_FAILURE() << "no error for " << c.pattern;
    } catch (const nextok::Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.pattern << ": " << e.what();
      EXPECT_EQ(e.param(), "pattern");
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
  // Catastrophic sizes are refused, not built.
  nextok::constraint::RegexOptions small;
  small.max_states = 200;
  EXPECT_THROW((void)Dfa::compile("(a|b)*a(a|b){12}", small), nextok::Error);
}

TEST(RegexDfa, TrieWalkEqualsBruteForceOnARealVocabulary) {
#ifdef NEXTOK_TOKENIZERS_DIR
  const auto dir = std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1";
#else
  const auto dir = std::filesystem::path("/nonexistent");
#endif
  if (!std::filesystem::exists(dir / "tokenizer.json")) GTEST_SKIP() << "no " << dir;
  const auto vocab = nextok::load_vocabulary(dir);
  const nextok::constraint::TokenTrie trie(*vocab);
  for (const char* p :
       {"[0-9]{1,4}(\\.[0-9]+)?", " ?(true|false|null)", "\"[a-z ]*\"", "\\p{L}*", "[^\"\\\\]*"}) {
    Dfa dfa;
    try {
      dfa = Dfa::compile(p);
    } catch (const nextok::Error&) {
      continue;  // \p{L} is refused; the others compile
    }
    std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()), 0);
    trie.allow(dfa, dfa.start(), mask);
    std::vector<uint32_t> want(mask.size(), 0);
    for (uint32_t id = 0; id < vocab->size(); ++id) {
      if (vocab->is_special(id) || vocab->bytes(id).empty()) continue;
      int32_t s = dfa.start();
      for (unsigned char c : vocab->bytes(id)) s = dfa.next(s, c);
      if (s != Dfa::kDead) want[id >> 5] |= 1u << (id & 31);
    }
    EXPECT_EQ(mask, want) << p;
  }
}

}  // namespace
