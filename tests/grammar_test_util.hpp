// What the grammar tests share: a small vocabulary, PCRE2 as an
// independent oracle (anchored, partial matching over bytes), and random
// walks that compare every mask with it.
#pragma once

#include <gtest/gtest.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <random>
#include <string>
#include <vector>

#include "nextok/error.hpp"
#include "nextok/grammar.hpp"
#include "nextok/mask.hpp"
#include "nextok/vocab.hpp"

// Every UTF-8 encoding of a code point of two bytes or more (no surrogates).
#define MB                                                                                         \
  "[\\xc2-\\xdf][\\x80-\\xbf]|\\xe0[\\xa0-\\xbf][\\x80-\\xbf]|[\\xe1-\\xec\\xee\\xef][\\x80-"      \
  "\\xbf]{2}|"                                                                                     \
  "\\xed[\\x80-\\x9f][\\x80-\\xbf]|\\xf0[\\x90-\\xbf][\\x80-\\xbf]{2}|[\\xf1-\\xf3][\\x80-\\xbf]{" \
  "3}|"                                                                                            \
  "\\xf4[\\x80-\\x8f][\\x80-\\xbf]{2}"

namespace nextok::grammar_test {

using nextok::Grammar;
using nextok::GrammarConstraint;

constexpr uint32_t kEos = 0;

// Single bytes of a small alphabet, every pair of them, and a few longer
// tokens; id 0 is EOS.
inline std::shared_ptr<const nextok::TokenIndex> small_index() {
  static const auto index = [] {
    const std::string alphabet = "abcx()+-=019 \n\"{}[],:.tn";
    std::vector<std::string> toks = {"<eos>"};
    for (char c : alphabet) toks.push_back(std::string(1, c));
    for (char c : "abx()+01 \"") {
      if (c == 0) continue;
      for (char d : "abx()+01 \"") {
        if (d != 0) toks.push_back(std::string{c, d});
      }
    }
    for (const char* t : {"abc", "((", "))", "+1", "1+", "true", "null", "ab ab", "\xc3\xa9",
                          "\xc3", "\xa9", "\xe2\x82\xac", "aaaa", "xxxx", "xy", "y"}) {
      toks.push_back(t);
    }
    const uint32_t eos[] = {kEos};
    return nextok::TokenIndex::build(nextok::Vocabulary::from_token_bytes(toks, eos, eos));
  }();
  return index;
}

// PCRE2 anchored at both ends, matching bytes (no UTF mode, so that a
// prefix may end inside a character).
class Pcre {
 public:
  explicit Pcre(const std::string& pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    // \z rather than PCRE2_ENDANCHORED, which partial matching refuses.
    const std::string anchored = "(?:" + pattern + ")\\z";
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(anchored.data()), anchored.size(),
                          PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE, &err, &off, nullptr);
    EXPECT_NE(code_, nullptr) << pattern;
    md_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~Pcre() {
    pcre2_match_data_free(md_);
    pcre2_code_free(code_);
  }
  bool full(const std::string& s) const {
    const int rc = run(s, 0);
    EXPECT_TRUE(rc >= 0 || rc == PCRE2_ERROR_NOMATCH) << rc;
    return rc >= 0;
  }
  // s can be extended to a match (hard partial matching: a complete match
  // with further text possible is reported as partial too).
  bool prefix(const std::string& s) const {
    const int rc = run(s, PCRE2_PARTIAL_HARD);
    EXPECT_TRUE(rc >= 0 || rc == PCRE2_ERROR_PARTIAL || rc == PCRE2_ERROR_NOMATCH) << rc;
    return rc >= 0 || rc == PCRE2_ERROR_PARTIAL;
  }

 private:
  int run(const std::string& s, uint32_t flags) const {
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, flags, md_,
                       nullptr);
  }
  pcre2_code* code_ = nullptr;
  pcre2_match_data* md_ = nullptr;
};

inline bool bit(const std::vector<uint32_t>& m, uint32_t id) {
  return (m[id >> 5] >> (id & 31)) & 1u;
}

// Random walks; at each step the whole mask is compared with brute force.
// Returns the number of masks checked.
inline size_t check_walks(const std::shared_ptr<const Grammar>& g,
                          const std::string& oracle_pattern, unsigned seed, int walks = 30,
                          int max_steps = 14) {
  const Pcre oracle(oracle_pattern);
  const auto& vocab = g->index().vocab();
  std::mt19937 rng(seed);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab.size()));
  size_t checked = 0;
  for (int w = 0; w < walks; ++w) {
    GrammarConstraint c(g);
    std::string text;
    for (int step = 0; step < max_steps; ++step) {
      c.step_mask(mask);
      std::vector<uint32_t> allowed;
      for (uint32_t id = 1; id < vocab.size(); ++id) {
        const bool want = oracle.prefix(text + std::string(vocab.bytes(id)));
        EXPECT_EQ(bit(mask, id), want)
            << oracle_pattern << " after '" << text << "' token '" << vocab.bytes(id) << "'";
        if (want) allowed.push_back(id);
      }
      EXPECT_EQ(bit(mask, kEos), oracle.full(text))
          << oracle_pattern << " EOS after '" << text << "'";
      EXPECT_EQ(c.is_complete(), oracle.full(text));
      ++checked;
      if (allowed.empty()) break;
      const uint32_t id = allowed[rng() % allowed.size()];
      c.advance(id);
      text += vocab.bytes(id);
    }
  }
  return checked;
}

// Grammar::structural_tag refuses `tag` with `code`, naming the request field.
inline void expect_structural_tag_error(const std::string& tag, ErrorCode code) {
  try {
    Grammar::structural_tag(small_index(), tag);
    ADD_FAILURE() << "compiled: " << tag;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << tag << ": " << e.what();
    EXPECT_EQ(e.param(), "structural_tag") << tag;
  }
}

}  // namespace nextok::grammar_test
