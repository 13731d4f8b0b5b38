// The grammar engine (nextok/grammar.hpp) against brute force: on a small
// vocabulary, every mask along random walks must equal "prefix + token is a
// prefix of some sentence", asked of PCRE2's partial matching (an
// independent engine; its recursion (?1) expresses the context-free
// cases), and EOS must be allowed exactly on complete sentences. Plus the
// GBNF parser's errors and positions, the limits, rollback and clone.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "grammar_test_util.hpp"
#include "nextok/error.hpp"

namespace {

using nextok::Error;
using nextok::ErrorCode;
using nextok::Grammar;
using nextok::GrammarConstraint;
using nextok::grammar_test::bit;
using nextok::grammar_test::check_walks;
using nextok::grammar_test::kEos;
using nextok::grammar_test::small_index;

struct Case {
  const char* gbnf;
  const char* pcre;  // the same language
};

const Case kCases[] = {
    {R"(root ::= "ab" | "a" [bc]+ "x")", "(?:ab|a[bc]+x)"},
    // Left recursion, which llama.cpp refuses.
    {"root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]+ | \"(\" expr \")\"\n",
     "((?:[0-9]+|\\((?1)\\))(?:\\+(?:[0-9]+|\\((?1)\\)))*)"},
    // Balanced parentheses: not regular.
    {"root ::= (\"(\" root \")\")* \"x\"?", "((?:\\((?1)\\))*x?)"},
    {"root ::= \"a\"{2,3} \"b\"{1,} ([01]{0,2})?", "a{2,3}b+(?:[01]{0,2})?"},
    {"root ::= [^a-x\\n]+ | \"é\" .",
     "(?:(?:[\\x00-\\x09\\x0b-\\x60\\x79-\\x7f]|" MB ")+|\\xc3\\xa9(?:[\\x00-\\x7f]|" MB "))"},
    // Nullable rules in the middle and at the end (empty completions).
    {"root ::= a b a \"x\" a\na ::= | \"a\" | a a\nb ::= \"b\"?", "a*b?a*xa*"},
    {"root ::= ws \"{\" ws (pair (\",\" ws pair)*)? \"}\" ws\npair ::= \"\\\"\" [a-c]* \"\\\"\" ws "
     "\":\" ws "
     "val ws\nval ::= \"true\" | \"null\" | [0-9]+ | root\nws ::= | \" \"",
     "( ?\\{ ?(?:(?:\"[a-c]*\" ?: ?(?:true|null|[0-9]+|(?1)) ?)(?:, ?(?:\"[a-c]*\" ?: "
     "?(?:true|null|[0-9]+|"
     "(?1)) ?))*)?\\} ?)"},
    // Keywords and names with nothing between them: every byte of a name
    // may end it and begin a keyword (sets alike except for where a keyword
    // began, which the walk's projection names must tell apart only where
    // it matters).
    {"root ::= \"ab\" ws name (ws \"ax\" ws name)* ws (\"tn\" ws name)?\n"
     "name ::= [a-c] [a-cx0-9]*\nws ::= \" \"*",
     "ab *[a-c][a-cx0-9]*(?: *ax *[a-c][a-cx0-9]*)* *(?:tn *[a-c][a-cx0-9]*)?"},
    {"root ::= (name | \"ab\" | \"b\" \"x\"? | \"(\" root \")\")+\nname ::= [a-b]+ \"x\"?",
     "((?:[ab]x?|\\((?1)\\))+)"},  // unambiguous for PCRE's backtracking
};

TEST(Grammar, GbnfMasksEqualBruteForce) {
  size_t checked = 0;
  unsigned seed = 1;
  for (const Case& c : kCases) {
    const auto g = Grammar::gbnf(small_index(), c.gbnf);
    checked += check_walks(g, c.pcre, seed++);
  }
  EXPECT_GT(checked, 500u);
}

// With the memo off every matcher names its sets itself (numbers that mean
// nothing to another matcher), while the grammar's walkers still pass from
// matcher to matcher.
TEST(Grammar, GbnfMasksEqualBruteForceWithTheMemoOff) {
  nextok::ConstraintLimits off;
  off.grammar_mask_memo_bytes = 0;
  size_t checked = 0;
  unsigned seed = 101;
  for (const Case& c : kCases) {
    const auto g = Grammar::gbnf(small_index(), c.gbnf, off);
    checked += check_walks(g, c.pcre, seed++);
  }
  EXPECT_GT(checked, 500u);
}

TEST(Grammar, RegexAndChoiceMasksEqualBruteForce) {
  const char* patterns[] = {"a(b|c)*x", "(a|aa)*b", "(x+x+)+y", "[0-9]{1,3}(\\.[0-9]+)?",
                            "(?:[^a]|b)x+"};
  // The same languages over bytes: [^a] is any UTF-8 character but 'a'.
  const char* pcre[] = {
      "a(b|c)*x", "(a|aa)*b", "(x+x+)+y", "[0-9]{1,3}(\\.[0-9]+)?",
      "(?:[\\x00-\\x60\\x62-\\x7f]|[\\xc2-\\xdf][\\x80-\\xbf]|\\xe0[\\xa0-\\xbf][\\x80-\\xbf]|"
      "[\\xe1-\\xec\\xee\\xef][\\x80-\\xbf]{2}|\\xed[\\x80-\\x9f][\\x80-\\xbf]|\\xf0[\\x90-\\xbf]"
      "[\\x80-\\xbf]{2}|[\\xf1-\\xf3][\\x80-\\xbf]{3}|\\xf4[\\x80-\\x8f][\\x80-\\xbf]{2}|b)x+"};
  unsigned seed = 100;
  for (size_t k = 0; k < std::size(patterns); ++k) {
    check_walks(Grammar::regex(small_index(), patterns[k]), pcre[k], seed++);
  }
  const std::vector<std::string> strings = {"ab", "abc", "a", "x y", "(1)", ""};
  check_walks(Grammar::choice(small_index(), strings), "(?:ab|abc|a|x y|\\(1\\)|)", 7);
}

TEST(Grammar, GbnfEqualsRegexOnTheSameLanguage) {
  // Two independent paths of the engine (Earley and the DFA) agree.
  const auto a = Grammar::gbnf(small_index(), "root ::= (\"a\" | \"bc\")* \"x\"{1,2}");
  const auto b = Grammar::regex(small_index(), "(a|bc)*x{1,2}");
  const auto& v = small_index()->vocab();
  std::vector<uint32_t> ma(nextok::bitmask_words(v.size())), mb(ma.size());
  GrammarConstraint ca(a), cb(b);
  std::mt19937 rng(5);
  for (int step = 0; step < 20; ++step) {
    ca.step_mask(ma);
    cb.step_mask(mb);
    ASSERT_EQ(ma, mb) << "step " << step;
    std::vector<uint32_t> allowed;
    for (uint32_t id = 1; id < v.size(); ++id) {
      if (bit(ma, id)) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    const uint32_t id = allowed[rng() % allowed.size()];
    ca.advance(id);
    cb.advance(id);
  }
}

std::string error_of(const std::string& gbnf, const nextok::ConstraintLimits& limits = {}) {
  try {
    Grammar::gbnf(small_index(), gbnf, limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << gbnf;
    EXPECT_EQ(e.param(), "grammar") << gbnf;
    return e.what();
  }
  ADD_FAILURE() << "compiled: " << gbnf;
  return "";
}

TEST(Grammar, GbnfErrorsNameLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"root ::= \"a\"\nfoo = \"b\"", "2:5: expecting ::="},
      {"root ::= \"abc", "1:10: unterminated literal"},
      {"root ::= [a-z", "1:10: unterminated character class"},
      {"root ::= ( \"a\"", "1:15: expecting ')'"},
      {"root ::= \"a\" \\q", "1:14: expecting newline"},
      {"root ::= \"\\q\"", "1:11: unknown escape"},
      {"root ::= \"\\x4\"", "1:13: expecting 2 hex digits"},
      {"root ::= * \"a\"", "1:10: expecting an item before a repetition"},
      {"root ::= \"a\"{x}", "1:14: expecting an integer"},
      {"root ::= \"a\"{2", "1:15: expecting ',' or '}'"},
      {"root ::= \"a\"{2,5", "1:17: expecting '}'"},
      {"root ::= \"a\"{2001}", "1:13: a repetition count above 2000"},
      {"root ::= item\n\nitem ::= \"a\" other", "3:14: undefined rule 'other'"},
      {"item ::= \"a\"", "no 'root' rule"},
      {"root ::= \"a\" <think>", "1:14: '<think>' is not one token of the vocabulary"},
      {"root ::= \"a\" !<[0]>", "1:14: !<...> alone is one token"},
      {"root ::= <[1", "1:13: expecting ']'"},
      {"root ::= \"\"*", "expecting an item before a repetition"},
      {"root ::= a\na ::= \"x\" a", "the grammar's language is empty"},
      {"root ::= [^\\x00-\\U0010FFFF]", "the grammar's language is empty"},
  };
  for (auto [text, want] : cases) {
    const std::string got = error_of(text);
    EXPECT_NE(got.find(want), std::string::npos) << text << "\n  got: " << got;
  }
}

TEST(Grammar, GbnfSyntaxAsLlamaCppParsesIt) {
  // Comments, rule names with '-', newlines inside parentheses and after
  // '|', a repetition applying to a whole literal, a later definition
  // replacing an earlier one, {m} {m,} {m,n}.
  const auto g =
      Grammar::gbnf(small_index(),
                    "# leading comment\n"
                    "root ::= my-rule (\n  \"x\" |\n  \"y\"  # inner\n) \"ab\"* \"0\"{2} \"1\"{1,} "
                    "\"b\"{0,1}\n"
                    "my-rule ::= \"c\"\n"
                    "my-rule ::= \"a\" |\n  \"b\"\n");
  GrammarConstraint c(g);
  EXPECT_TRUE(c.completes_with("axabab001"));
  EXPECT_TRUE(c.completes_with("by0011b"));
  EXPECT_FALSE(c.completes_with("cx001"));     // the first definition was replaced
  EXPECT_FALSE(c.completes_with("axaba001"));  // "ab"* repeats the literal
  EXPECT_FALSE(c.completes_with("ax01"));
  EXPECT_TRUE(c.accepts_bytes("ay00"));
  // Escapes.
  const auto e = Grammar::gbnf(
      small_index(), "root ::= \"\\n\\r\\t\\\\\\\"\\[\\]\\x41\\u00e9\\U0001F600\" [\\]a-]");
  EXPECT_TRUE(GrammarConstraint(e).completes_with("\n\r\t\\\"[]A\xc3\xa9\xf0\x9f\x98\x80]"));
  EXPECT_TRUE(GrammarConstraint(e).completes_with("\n\r\t\\\"[]A\xc3\xa9\xf0\x9f\x98\x80-"));
  // '_' in names, as XGrammar's EBNF (what vLLM and SGLang pass) allows.
  const auto u = Grammar::gbnf(small_index(), "root ::= basic_value\nbasic_value ::= \"a\"+\n");
  EXPECT_TRUE(GrammarConstraint(u).completes_with("aa"));
}

// Compiling makes the start state's mask (into the memo). A grammar whose
// first mask fails still compiles; the matcher reports the error, as it
// did when the first mask was made at the first step.
TEST(Grammar, AStartMaskPastTheLimitsFailsAtTheMatcherNotTheCompile) {
  // Recursive, so Earley reads it (a regular grammar runs on its DFA).
  std::string wide = "root ::= \"(\" root \")\"";
  for (int k = 0; k < 100; ++k) wide += " | \"a" + std::to_string(k) + "\"";
  nextok::ConstraintLimits few;
  few.max_parse_items = 64;  // the start set predicts 100 alternatives
  std::shared_ptr<const Grammar> g;
  ASSERT_NO_THROW(g = Grammar::gbnf(small_index(), wide, few));
  std::vector<uint32_t> mask(nextok::bitmask_words(small_index()->vocab().size()));
  try {
    GrammarConstraint c(g);
    c.step_mask(mask);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("max_parse_items"), std::string::npos) << e.what();
  }
  // Within the limits, the mask made at compile is the one a matcher gets.
  const auto ok = Grammar::gbnf(small_index(), wide);
  GrammarConstraint c(ok);
  c.step_mask(mask);
  const auto a = small_index()->vocab().find("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(nextok::bitmask_allows(mask, *a));
  const auto x = small_index()->vocab().find("x");
  ASSERT_TRUE(x.has_value());
  EXPECT_FALSE(nextok::bitmask_allows(mask, *x));
}

TEST(Grammar, HostileGrammarsStayBounded) {
  using Clock = std::chrono::steady_clock;
  // A huge alternation: past max_grammar_nodes, a clear error.
  std::string big = "root ::= \"w0\"";
  for (int k = 1; k < 60000; ++k) big += " | \"w" + std::to_string(k) + "\"";
  auto t0 = Clock::now();
  EXPECT_NE(error_of(big).find("max_grammar_nodes"), std::string::npos);
  // Allowed more nodes, it compiles and masks in bounded time.
  nextok::ConstraintLimits roomy;
  roomy.max_grammar_nodes = 1'000'000;
  roomy.max_parse_items = 200'000;  // every alternative is predicted at the start
  const auto g = Grammar::gbnf(small_index(), big, roomy);
  GrammarConstraint c(g);
  std::vector<uint32_t> mask(nextok::bitmask_words(small_index()->vocab().size()));
  c.step_mask(mask);
  EXPECT_TRUE(c.completes_with("w59999"));
  EXPECT_FALSE(c.completes_with("w60000"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 30.0);
  // Deep nesting of parentheses: the parser's recursion is bounded.
  std::string deep = "root ::= " + std::string(5000, '(') + "\"a\"" + std::string(5000, ')');
  EXPECT_NE(error_of(deep).find("nested deeper"), std::string::npos);
  // A compile budget and a cancel flag.
  nextok::ConstraintLimits tight = roomy;
  std::atomic<bool> cancel{true};
  tight.cancel = &cancel;
  try {
    Grammar::gbnf(small_index(), big, tight);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.param(), "cancelled");
  }
  // Right recursion grows Earley sets with the input: past
  // max_parse_items it is a clear error, not a stall.
  nextok::ConstraintLimits few;
  few.max_parse_items = 64;
  const auto r = Grammar::gbnf(small_index(), "root ::= \"a\" root | \"b\"", few);
  GrammarConstraint rc(r);
  const auto a = *small_index()->vocab().find("a");
  try {
    for (int k = 0; k < 200; ++k) {
      rc.step_mask(mask);
      rc.advance(a);
    }
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("max_parse_items"), std::string::npos) << e.what();
  }
  // Deeply nested input on a recursive grammar keeps sets small.
  const auto p = Grammar::gbnf(small_index(), "root ::= \"(\" root \")\" | \"x\"");
  GrammarConstraint pc(p);
  const auto open = *small_index()->vocab().find("((");
  for (int k = 0; k < 2000; ++k) pc.advance(open);
  EXPECT_TRUE(pc.completes_with("x" + std::string(4000, ')')));
  EXPECT_FALSE(pc.completes_with("x" + std::string(3999, ')')));
  // An ambiguous regular part (a run that splits anywhere) is read as its
  // DFA, so sets stay small however long the run: read as written,
  // `( [a-z]+ [a-z]* )*` keeps an item per byte where a piece may have
  // begun, past 64 within the first hundred bytes.
  const auto amb =
      Grammar::gbnf(small_index(), "root ::= \"(\" root \")\" | ( [a-z]+ [a-z]* )* \".\"", few);
  GrammarConstraint ac(amb);
  for (int k = 0; k < 500; ++k) {
    ac.step_mask(mask);
    ac.advance(a);
  }
  EXPECT_TRUE(ac.completes_with("."));
  EXPECT_FALSE(ac.completes_with(")"));
}

TEST(Grammar, ExponentialRegexesCompileQuickly) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (const char* p : {"(a|aa)*b", "(x+x+)+y", "(a*)*b", "(a|a?)+c", "((ab)*|a*)*x"}) {
    const auto g = Grammar::regex(small_index(), p);
    GrammarConstraint c(g);
    EXPECT_FALSE(c.completes_with(std::string(5000, p[1] == 'x' ? 'x' : 'a')));
  }
  // The same shapes as GBNF (Earley): bounded per byte.
  const auto g = Grammar::gbnf(small_index(), "root ::= (\"x\"+ \"x\"+)+ \"y\"");
  GrammarConstraint c(g);
  EXPECT_TRUE(c.completes_with(std::string(300, 'x') + "y"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 20.0);
}

TEST(Grammar, RollbackCloneAndReset) {
  const auto g = Grammar::gbnf(small_index(), kCases[1].gbnf);
  const auto& v = small_index()->vocab();
  std::vector<uint32_t> m1(nextok::bitmask_words(v.size())), m2(m1.size());
  GrammarConstraint c(g);
  const std::vector<std::string> toks = {"((", "1", "+1", "))", "+", "0"};
  std::vector<std::vector<uint32_t>> masks;
  for (const auto& t : toks) {
    c.step_mask(m1);
    masks.push_back(m1);
    c.advance(*v.find(t));
  }
  EXPECT_TRUE(c.is_complete());
  auto copy = c.clone();
  c.rollback(3);
  c.step_mask(m1);
  EXPECT_EQ(m1, masks[3]);
  EXPECT_FALSE(c.is_complete());
  copy->step_mask(m2);
  EXPECT_TRUE(bit(m2, kEos));  // the clone kept its state
  copy->advance(kEos);
  EXPECT_TRUE(copy->finished());
  EXPECT_THROW(copy->advance(*v.find("1")), Error);
  copy->rollback(1);
  EXPECT_FALSE(copy->finished());
  EXPECT_THROW(c.rollback(10), Error);
  // A refused token leaves the state unchanged.
  EXPECT_THROW(c.advance(*v.find("a")), Error);
  c.step_mask(m1);
  EXPECT_EQ(m1, masks[3]);
  EXPECT_THROW(c.advance(kEos), Error);  // not complete
  c.reset();
  c.step_mask(m1);
  EXPECT_EQ(m1, masks[0]);
  EXPECT_EQ(c.steps(), 0u);
}

TEST(Grammar, ChoiceAndRegexErrors) {
  EXPECT_THROW(Grammar::choice(small_index(), std::vector<std::string>{}), Error);
  try {
    Grammar::regex(small_index(), "a(?=b)");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
  }
  try {
    Grammar::regex(small_index(), "a(b");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.param(), "pattern");
  }
  EXPECT_THROW(Grammar::regex(small_index(), "[^\\s\\S]"), Error);  // empty language
}

}  // namespace
