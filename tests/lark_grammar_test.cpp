// The Lark front-end (Grammar::lark) against brute force: each grammar
// beside a PCRE2 pattern of the same language (what lark's Earley parser
// with the dynamic_complete lexer accepts), every mask along random walks
// compared; then the same language as GBNF gives the same masks, and the
// errors name line and column.
#include <gtest/gtest.h>

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
using nextok::grammar_test::small_index;

struct Case {
  const char* lark;
  const char* pcre;  // the same language
};

const Case kCases[] = {
    {"start: \"a\" b+ \"x\"\nb: \"b\" | \"c\"", "a(?:b|c)+x"},
    // %ignore: before any terminal of a rule and at the end, not inside
    // a terminal (NUM).
    {"start: item (\",\" item)*\n?item: \"a\" | \"b\" NUM\nNUM: \"1\" \"0\"*\n%ignore \" \"",
     " *(?:a|b *10*)(?: *, *(?:a|b *10*))* *"},
    {"start: NUM (\"+\" NUM)*  // a comment\nNUM: /[0-9]+/", "[0-9]+(?:\\+[0-9]+)*"},
    {"start: L~2..3 INT\nL: \"a\"..\"c\"\n%import common.INT", "[a-c]{2,3}[0-9]+"},
    {"start: \"ab\"i \"x\" ~ 2", "[aA][bB]xx"},
    // Optional brackets, recursion, aliases, multi-line alternatives.
    {"start: \"(\" [inner] \")\" -> paren\ninner: start\n    | \"1\"", "(\\((?:(?1)|1)?\\))"},
    // Python's dot: all but \n; with the s flag all.
    {"start: /a.b/", "a(?:[\\x00-\\x09\\x0b-\\x7f]|" MB ")b"},
    {"start: /a.b/s | /x(?:0|1){,2}/", "(?:a(?:[\\x00-\\x7f]|" MB ")b|x[01]{0,2})"},
    {"start: ESCAPED_STRING\n%import common.ESCAPED_STRING",
     "\"(?:[^\"\\\\\\n\\x80-\\xff]|" MB "|\\\\(?:[^\\n\\x80-\\xff]|" MB "))*\""},
    {"start: SIGNED_NUMBER\n%import common (SIGNED_NUMBER)",
     "[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?"},
    {"start: W (W)*\nW: /[a-c]+/ | \",\"\n%import common.WS -> SPACE\n%ignore SPACE",
     // Whitespace, letters and commas with at least one letter or comma
     // (the pattern unambiguous, so that PCRE2 does not backtrack past its
     // limit).
     "[\\t\\n\\f\\r ]*[a-c,][\\t\\n\\f\\r a-c,]*"},
    // An ignored token is its longest match, as lark's lexer takes it: a
    // comment runs to the end of its line, so "b" cannot follow it there.
    {"start: \"a\" \"b\"\n%ignore /x[^\\n]*/\n%ignore \"\\n\"",
     "(?:x(?:[^\\n\\x80-\\xff]|" MB ")*(?=\\n|\\z)|\\n)*a(?:x(?:[^\\n\\x80-\\xff]|" MB
     ")*(?=\\n|\\z)|\\n)*b(?:x(?:[^\\n\\x80-\\xff]|" MB ")*(?=\\n|\\z)|\\n)*"},
};

TEST(LarkGrammar, MasksEqualBruteForce) {
  size_t checked = 0;
  unsigned seed = 300;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.lark);
    const auto g = Grammar::lark(small_index(), c.lark);
    EXPECT_EQ(g->kind(), Grammar::Kind::kLark);
    checked += check_walks(g, c.pcre, seed++);
  }
  EXPECT_GT(checked, 800u);
}

TEST(LarkGrammar, EqualsGbnfOnTheSameLanguage) {
  const auto a = Grammar::lark(small_index(),
                               "?start: sum\n?sum: sum \"+\" atom | atom\n"
                               "atom: DIGIT+ | \"(\" sum \")\"\n%import common.DIGIT");
  const auto b = Grammar::gbnf(small_index(),
                               "root ::= sum\nsum ::= sum \"+\" atom | atom\n"
                               "atom ::= [0-9]+ | \"(\" sum \")\"\n");
  const auto& v = small_index()->vocab();
  std::vector<uint32_t> ma(nextok::bitmask_words(v.size())), mb(ma.size());
  std::mt19937 rng(9);
  for (int walk = 0; walk < 10; ++walk) {
    GrammarConstraint ca(a), cb(b);
    for (int step = 0; step < 16; ++step) {
      ca.step_mask(ma);
      cb.step_mask(mb);
      ASSERT_EQ(ma, mb) << "walk " << walk << " step " << step;
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
}

std::pair<std::string, std::string> error_of(const std::string& lark) {
  try {
    Grammar::lark(small_index(), lark);
  } catch (const Error& e) {
    return {e.param(), e.what()};
  }
  ADD_FAILURE() << "compiled: " << lark;
  return {};
}

TEST(LarkGrammar, DeepNestingIsAnErrorNotAStackOverflow) {
  // Nesting the reader's own bracket limit does not see: inside a %json
  // schema and inside a regex terminal.
  const std::string schema = [] {
    std::string s;
    for (int i = 0; i < 20000; ++i) s += "{\"items\": ";
    s += "{}";
    return s + std::string(20000, '}');
  }();
  EXPECT_NE(error_of("start: %json " + schema).second.find("nests deeper than 128 levels"),
            std::string::npos);
  // Each definition used by another is compiled inside it: a chain of
  // 100,000 rules (or terminals) overflowed the stack.
  for (const char* kind : {"r", "R"}) {
    std::string chain = std::string("start: ") + kind + "0\n";
    for (int i = 0; i < 100000; ++i)
      chain += kind + std::to_string(i) + ": " + kind + std::to_string(i + 1) + "\n";
    chain += kind + std::string("100000: \"a\"\n");
    EXPECT_NE(error_of(chain).second.find("refer to each other more than 200 deep"),
              std::string::npos)
        << kind;
  }
  const std::string groups = std::string(20000, '(') + "a" + std::string(20000, ')');
  EXPECT_NE(error_of("start: /" + groups + "/").second.find("groups nested deeper than 1000"),
            std::string::npos);
}

TEST(LarkGrammar, ErrorsNameLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"start: \"a\"\nfoo \"b\"", "2:5: expecting ':'"},
      {"start: \"abc", "1:8: unterminated string"},
      {"start: /ab", "1:8: unterminated regex"},
      {"start: ( \"a\"", "1:13: expecting ')'"},
      {"start: [ \"a\" )", "1:14: expecting ']'"},
      {"start: item\n\nitem: \"a\" other", "3:11: undefined rule 'other'"},
      {"start: A\nA: \"a\" B", "2:8: undefined terminal 'B'"},
      {"item: \"a\"", "no 'start' rule"},
      {"start: \"a\"\nstart: \"b\"", "2:1: 'start' is defined twice"},
      {"start: A\nA: \"x\" A", "2:8: the terminal 'A' uses itself"},
      {"start: A\nA: \"x\" b\nb: \"y\"", "2:8: a terminal cannot use the rule 'b'"},
      {"start: _sep{\"a\", \",\"}", "1:8: '_sep' is not a template"},
      {"_sep{x, s}: x (s x)*\nstart: _sep{\"a\"}", "2:8: the template '_sep' takes 2 arguments"},
      {"_sep{x, s}: x (s x)*\nstart: _sep{(\"a\"), \",\"}",
       "2:13: a template argument is one item"},
      {"SEP{x}: x\nstart: \"a\"", "1:4: a template must be a rule, not a terminal"},
      {"t{x}: x t{(x)}\nstart: t{\"a\"}", "a template argument is one item"},
      {"t{x}: x | t{w{x}}\nw{y}: y \"a\"\nstart: t{\"a\"}", "more than 1000 template instances"},
      {"t{x}: x | t{p{x, x}}\np{a, b}: a b\nstart: t{\"a\"}", "arguments exceed 16384 bytes"},
      {"start: \"a\"\n%override nope: \"b\"", "2:11: %override needs 'nope' defined above it"},
      {"%extend start: \"b\"\nstart: \"a\"", "1:9: %extend needs 'start' defined above it"},
      {"start: \"a\"\n%declare x", "2:10: %declare names terminals, not the rule 'x'"},
      {"start: \"a\" A?\n%declare A\nA: \"b\"", "3:1: 'A' is defined twice"},
      {"start: \"a\" A?\n%declare A\n%extend A: \"c\"", "3:9: 'A' is only declared"},
      {"start: \"a\" T?\nT: A \"x\"\n%declare A", "2:4: the declared terminal 'A' has no pattern"},
      {"start: \"a\"\n%ignore A\n%declare A", "the declared terminal 'A' has no pattern"},
      {"start: \"a\"\n%override start{x}: x", "'start' is not a template"},
      {"start: t{\"a\"}\nt{p}: p\n%extend t{q}: q",
       "3:9: %extend of the template 't' needs the same"},
      {"start: X\n%import mylib.X", "2:1: only %import common is supported"},
      {"start: X\n%import common.NOPE -> X", "2:1: common has no terminal 'NOPE'"},
      {"start: \"a\" ~ 2001", "a repetition count above 2000"},
      {"start: \"a\" ~ 3..2", "1:12: a repetition range out of order"},
      {"start: \"ab\"..\"c\"", "a range needs one-character strings"},
      {"start: /a/m", "1:11: the regex flag 'm' is not supported"},
      {"start: a\na: \"x\" a", "the grammar's language is empty"},
      {"start: \"a\" %", "1:12: unexpected '%'"},
      // llguidance's dialect.
      {"start: \"a\"{3,2}", "1:11: a repetition range out of order"},
      {"start: \"a\"{2 x}", "1:11: unexpected '{'"},
      {"start: <|eot_id|>", "1:8: the vocabulary has no token <|eot_id|>"},
      {"start: @sub", "1:8: references to other grammars (@name) are not supported"},
      {"%llguidance {\"no_forcing\": \"x\"}\nstart: \"a\"",
       "1:1: the %llguidance option no_forcing takes true or false, not \"x\""},
      {"foo[max_tokens=3]: /a/\nstart: foo",
       "1:5: the lexeme option 'max_tokens' is not supported"},
      {"foo[temperature=0.5]: /a/\nstart: foo", "1:5: the lexeme option 'temperature'"},
      {"foo[stop=\"x\", suffix=\"y\"]: /a/\nstart: foo", "1:15: a lexeme takes one stop or suffix"},
      {"foo[lazy, stop=\"\"]: /a/\nstart: foo", "1:11: stop=\"\" and lazy cannot be used together"},
      {"FOO[lazy]: /a/\nstart: FOO", "1:4: lexeme options go on rules, not on terminals"},
      {"start: a & b\na: \"x\"\nb: \"x\"", "1:8: & and ~ build terminals"},
      {"start: T\nT: \"x\" (/a/ & /b/)", "2:4: & and ~ are supported at the top of a terminal"},
      {"start: T\nT: \"x\" ~/a/",
       "2:4: & and ~ are supported at the top of a terminal, not inside"},
      {"start: U\nU: T \"x\"\nT: /[ab]/ & /b/\n%ignore \" \"",
       "3:4: a terminal built with & or ~ cannot be part of"},
      {"start: v\nv: %regex {\"words\": \"a b\"}", "2:4: %regex takes one of substring_words"},
      {"start: U\nU: X \"x\"\nX: %regex {\"substring_chars\": \"ab\"}\n%ignore \" \"",
       "3:4: a %regex terminal cannot be part of another terminal"},
      {"start: v\nv: %json {\"type\": \"string\"", "2:4: unterminated JSON object after %json"},
      {"start: v\nv: %json {\"type\": 1}", "2:4: %json (at /type)"},
      {"start: X\nX: %json {}", "2:4: %json is a rule: a terminal cannot use it"},
      {"start: v\nv: %json {\"type\": \"array\", \"items\": {\"enum\": [1, 2]},"
       " \"uniqueItems\": true}",
       "2:4: %json: uniqueItems cannot be written as grammar rules"},
      {"start: v\nv: %json {\"x-guidance\": {\"item_separator\": \",\"}}",
       "the x-guidance option 'item_separator' is not supported"},
      {"%llguidance {\"allow_invalid_utf8\": true}\nstart: \"a\"",
       "1:1: the %llguidance option allow_invalid_utf8=true is not supported"},
  };
  for (auto [text, want] : cases) {
    const auto [param, got] = error_of(text);
    EXPECT_EQ(param, "grammar") << text;
    EXPECT_NE(got.find(want), std::string::npos) << text << "\n  got: " << got;
  }
  // A regex a DFA cannot express: its own parameter, still with a position.
  const auto [param, got] = error_of("start: \"x\" /a(?=b)/");
  EXPECT_EQ(param, "pattern");
  EXPECT_NE(got.find("1:12: "), std::string::npos) << got;
  EXPECT_NE(got.find("lookaround"), std::string::npos) << got;
}

TEST(LarkGrammar, HostileGrammarsStayBounded) {
  nextok::ConstraintLimits limits;
  limits.max_grammar_nodes = 10000;
  std::string text = "start: ";
  for (int k = 0; k < 20000; ++k) text += (k ? " | \"w" : "\"w") + std::to_string(k) + "\"";
  try {
    Grammar::lark(small_index(), text, limits);
    ADD_FAILURE() << "a 20,000-way alternation compiled past max_grammar_nodes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_grammar_nodes"), std::string::npos) << e.what();
  }
  // Left recursion and an exponential regex compile and walk.
  const auto g = Grammar::lark(small_index(), "start: start \"+\" N | N\nN: /(a|aa)*b/");
  EXPECT_GT(check_walks(g, "(a|aa)*b(?:\\+(a|aa)*b)*", 17, 10, 10), 20u);
}

}  // namespace

// llguidance's special tokens: <name> and <[ids]> read the token itself, never
// its spelling as text, and the text tokens holding 0xFF (the bytes a special
// token is read as) stay out of every mask.
TEST(LarkGrammar, SpecialTokensAreReadAsTokens) {
  const std::vector<std::string> toks = {"<eos>", "<|call|>", "<|end|>", "a",    "b",  "\xFF",
                                         "a\xFF", "<",        "|",       "call", "|>", "<think>"};
  const uint32_t eos[] = {0}, specials[] = {0, 1, 2};
  const auto index =
      nextok::TokenIndex::build(nextok::Vocabulary::from_token_bytes(toks, eos, specials));
  const auto g = Grammar::lark(index, "start: \"a\" <|call|> \"b\"* <[2]> <think>");
  std::vector<uint32_t> m(nextok::bitmask_words(toks.size()));
  const auto allowed = [&](GrammarConstraint& c) {
    c.step_mask(m);
    std::vector<uint32_t> out;
    for (uint32_t id = 0; id < toks.size(); ++id)
      if (bit(m, id)) out.push_back(id);
    return out;
  };
  GrammarConstraint c(g);
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{3}));  // "a", not "a\xFF"
  c.advance(3);
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{1}));  // <|call|>, not "<" nor "\xFF"
  EXPECT_THROW(c.advance(7), Error);                  // its text is no token
  c.advance(1);
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{2, 4}));
  c.advance(4);
  c.advance(2);
  // <think> is an added token with text here: read as its text.
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{7, 11}));
  c.advance(11);
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{0}));  // complete: EOS only
  c.rollback(2);
  EXPECT_EQ(allowed(c), (std::vector<uint32_t>{2, 4}));

  const std::pair<const char*, const char*> errors[] = {
      {"start: <|nope|>", "1:8: the vocabulary has no token <|nope|>"},
      {"start: <[3]>", "1:8: token 3 is no special token of this vocabulary"},
      {"start: <[^1]>", "1:8: token ranges with ^ or * would take text tokens"},
      {"start: <[2-1]>", "1:8: a token range out of order"},
      {"start: T\nT: \"a\" <|call|>", "2:8: a token (<...>) cannot be part of a terminal"},
  };
  for (auto [text, want] : errors) {
    try {
      Grammar::lark(index, text);
      ADD_FAILURE() << "compiled: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << text << ": " << e.what();
    }
  }
}
