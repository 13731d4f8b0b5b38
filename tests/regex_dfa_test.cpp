// The regex → DFA compiler against PCRE2 on random strings (with ^ and $
// anywhere, in both modes, as JSON strings and in labeled unions), its
// ECMA-262 classes, its errors, and together with the token trie against
// brute force.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <gtest/gtest.h>

#include <pcre2.h>
#include <utf8proc.h>
#include "fixtures.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/regex/regex_parser.hpp"
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

// PCRE2 compiled once, with ECMA's ^ and $ (no multiline flag: $ only at
// the very end, not before a final newline).
class Pcre2 {
 public:
  Pcre2(const std::string& pattern, bool full_match) {
    int err = 0;
    PCRE2_SIZE off = 0;
    const uint32_t flags =
        PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | (full_match ? PCRE2_ANCHORED | PCRE2_ENDANCHORED : 0);
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), flags, &err,
                          &off, nullptr);
    EXPECT_NE(code_, nullptr) << pattern;
    md_ = pcre2_match_data_create(1, nullptr);
  }
  ~Pcre2() {
    pcre2_match_data_free(md_);
    pcre2_code_free(code_);
  }
  Pcre2(const Pcre2&) = delete;
  Pcre2& operator=(const Pcre2&) = delete;
  bool matches(const std::string& text) const {
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, md_,
                       nullptr) >= 0;
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* md_ = nullptr;
};

// Every string over `alphabet` up to max_len symbols.
std::vector<std::string> all_strings(const std::vector<std::string>& alphabet, size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t begin = 0, len = 0; len < max_len; ++len) {
    const size_t end = out.size();
    for (size_t k = begin; k < end; ++k) {
      for (const auto& a : alphabet) out.push_back(out[k] + a);
    }
    begin = end;
  }
  return out;
}

// A random pattern over a and b with ^ and $ anywhere: in groups,
// alternations and repetitions (assertions themselves are not quantifiable).
std::string random_anchored_pattern(std::mt19937& rng, int depth) {
  std::string out;
  const size_t alts = 1 + rng() % (depth > 0 ? 3 : 2);
  for (size_t a = 0; a < alts; ++a) {
    if (a) out += '|';
    const size_t terms = rng() % 4;
    for (size_t t = 0; t < terms; ++t) {
      const auto pick = rng() % 10;
      if (pick < 2) {
        out += pick == 0 ? '^' : '$';
        continue;
      }
      if (pick < 6) {
        out += "ab."[rng() % 3];
      } else if (pick < 7) {
        out += "[ab]";
      } else if (depth > 0) {
        out += (rng() % 2 ? "(" : "(?:") + random_anchored_pattern(rng, depth - 1) + ")";
      } else {
        out += 'a';
      }
      if (rng() % 3 == 0) {
        static const char* const kQuantifiers[] = {"*", "+", "?", "{2}", "{0,2}", "{1,}"};
        out += kQuantifiers[rng() % 6];
      }
    }
  }
  return out;
}

const char* const kInnerAnchorPatterns[] = {
    "^$|^\\d{1,15}$",
    "(^$)|(^[0-9a-f]{8}$)",
    "a|^b",
    "(^a|b$)c",
    "^(a$|b)",
    "x^",
    "$^",
    "(^a)*",
    "(a|^)b",
    "(a$)+",
    "a$|b",
    "^a|b",
    "(^)*a",
    "a(^|b)",
    "($|a)*",
    "^^a$$",
    "(?:^a|b)(c|$)",
    "a$b",
    "$a",
};

// The DFA and PCRE2 agree on every text, in full-match and search mode.
void expect_both_modes_equal_pcre2(const std::string& p, const std::vector<std::string>& texts) {
  for (bool full : {true, false}) {
    nextok::constraint::RegexOptions opt;
    opt.full_match = full;
    const Dfa dfa = Dfa::compile(p, opt);
    const Pcre2 re(p, full);
    for (const auto& s : texts)
      ASSERT_EQ(dfa.matches(s), re.matches(s)) << p << " full " << full << " text " << s;
  }
}

TEST(RegexDfa, InnerAnchorsEqualPcre2) {
  const std::vector<std::string> alphabet = {"a", "b", "c", "x", "0", "5", "\n"};
  const std::vector<std::string> exhaustive = all_strings(alphabet, 4);
  std::mt19937 rng(7);
  for (const char* p : kInnerAnchorPatterns) {
    std::vector<std::string> texts = exhaustive;
    for (int k = 0; k < 2000; ++k) {  // longer, mostly digits and hex
      std::string s;
      const size_t len = rng() % 19;
      for (size_t i = 0; i < len; ++i) s += "0123456789abcfx\n"[rng() % (k % 2 ? 10 : 16)];
      texts.push_back(std::move(s));
    }
    expect_both_modes_equal_pcre2(p, texts);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(RegexDfa, RandomAnchoredPatternsEqualPcre2OnAllShortStrings) {
  const std::vector<std::string> texts = all_strings({"a", "b", "\n"}, 6);
  std::mt19937 rng(11);
  for (int k = 0; k < 400; ++k) {
    const std::string p = random_anchored_pattern(rng, 2);
    expect_both_modes_equal_pcre2(p, texts);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The JSON spelling of text over a, b and \n: \n as "\n" or "\u000a".
std::string json_spelling(const std::string& text, std::mt19937& rng) {
  std::string out = "\"";
  for (char c : text) out += c != '\n' ? std::string(1, c) : rng() % 2 ? "\\n" : "\\u000a";
  return out + "\"";
}

TEST(RegexDfa, AnchorsInJsonStringsAssertTheContentsEnds) {
  const std::vector<std::string> texts = all_strings({"a", "b", "\n"}, 5);
  std::mt19937 rng(13);
  std::vector<std::string> patterns(std::begin(kInnerAnchorPatterns),
                                    std::end(kInnerAnchorPatterns));
  for (int k = 0; k < 150; ++k) patterns.push_back(random_anchored_pattern(rng, 2));
  for (const auto& p : patterns) {
    for (bool full : {true, false}) {
      nextok::constraint::RegexOptions opt;
      opt.full_match = full;
      const Dfa plain = Dfa::compile(p, opt);
      opt.json_string = true;
      const Dfa json = Dfa::compile(p, opt);
      for (const auto& s : texts) {
        const std::string spelled = json_spelling(s, rng);
        ASSERT_EQ(json.matches(spelled), plain.matches(s))
            << p << " full " << full << " " << spelled;
        ASSERT_FALSE(json.matches(spelled.substr(0, spelled.size() - 1))) << p << " " << spelled;
      }
    }
  }
}

TEST(RegexDfa, LabeledUnionsOfAnchoredPatternsTellWhichMatched) {
  const std::vector<std::string> texts = all_strings({"a", "b", "\n"}, 5);
  std::mt19937 rng(17);
  for (int k = 0; k < 20; ++k) {
    std::vector<std::string> patterns;
    for (int i = 0; i < 3; ++i) patterns.push_back(random_anchored_pattern(rng, 2));
    std::vector<nextok::constraint::RegexAlternative> alts;
    for (const auto& p : patterns) alts.push_back({p});
    alts.push_back({"ab", true});
    for (int mode = 0; mode < 4; ++mode) {
      nextok::constraint::RegexOptions opt;
      opt.full_match = mode & 1;
      opt.json_string = mode & 2;
      const Dfa u = Dfa::compile_labeled(alts, opt);
      std::vector<Dfa> singles;
      for (const auto& a : alts) singles.push_back(Dfa::compile_labeled(std::span(&a, 1), opt));
      for (const auto& s : texts) {
        const std::string spelled = opt.json_string ? json_spelling(s, rng) : s;
        int32_t st = u.start();
        for (unsigned char c : spelled) st = u.next(st, c);
        std::vector<uint32_t> got(u.labels(st).begin(), u.labels(st).end()), want;
        std::sort(got.begin(), got.end());
        for (uint32_t i = 0; i < singles.size(); ++i) {
          if (singles[i].matches(spelled)) want.push_back(i);
        }
        ASSERT_EQ(got, want) << patterns[0] << " | " << patterns[1] << " | " << patterns[2]
                             << " mode " << mode << " " << spelled;
      }
    }
  }
}

TEST(RegexDfa, EcmaSyntax) {
  EXPECT_TRUE(Dfa::compile("\\u00e9\\u{1F600}").matches("é😀"));
  EXPECT_FALSE(Dfa::compile("[]a]").matches("a]"));  // [] is the empty class
  EXPECT_TRUE(Dfa::compile("[^]").matches("\n"));
  EXPECT_TRUE(Dfa::compile("a{").matches("a{"));  // Annex B: a literal brace
}

// Python's \A, \Z and a leading (?i), which ECMA-262 lacks, read as re reads
// them (schemas written for Python validators use them), in both modes.
TEST(RegexDfa, PythonAnchorsAndLeadingIgnoreCaseInEcmaPatterns) {
  nextok::constraint::RegexOptions search;
  search.full_match = false;
  const Dfa z = Dfa::compile(R"(^arn:[a-z]+\Z)", search);
  EXPECT_TRUE(z.matches("arn:aws"));
  EXPECT_FALSE(z.matches("arn:aws:x"));
  EXPECT_FALSE(z.matches("arn:aws\n"));  // \Z is the very end, unlike Python's $
  const Dfa a = Dfa::compile(R"(\Ab)", search);
  EXPECT_TRUE(a.matches("bc"));
  EXPECT_FALSE(a.matches("ab"));
  const Dfa i = Dfa::compile("(?i)^aws-[a-z]+$", search);
  EXPECT_TRUE(i.matches("AWS-Lambda"));
  EXPECT_TRUE(i.matches("aws-sqs"));
  EXPECT_FALSE(i.matches("aws_s3"));
  EXPECT_TRUE(Dfa::compile("(?i)k").matches("K"));
  // Anywhere but the start it stays an error, as Python 3.11 has it.
  EXPECT_THROW(Dfa::compile("a(?i)b"), nextok::Error);
}

// The Unicode tables (\\w, \\d, case classes) scan planes 0-3 only: no
// letter, number or cased code point lies beyond them.
TEST(RegexDfa, NoLetterDigitOrCaseBeyondPlaneThree) {
  size_t found = 0;
  for (uint32_t cp = 0x40000; cp <= 0x10FFFF; ++cp) {
    const auto c = static_cast<utf8proc_int32_t>(cp);
    const auto cat = utf8proc_category(c);
    const bool letter_or_number =
        cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO;  // L*, M*, N*
    const bool mark =
        cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_MC || cat == UTF8PROC_CATEGORY_ME;
    if ((letter_or_number && !mark) || utf8proc_tolower(c) != c || utf8proc_toupper(c) != c) {
      ++found;
      ADD_FAILURE() << "U+" << std::hex << cp;
      if (found > 5) break;
    }
  }
  // And the scan itself sees them: plane 3 has letters (CJK extension G).
  EXPECT_EQ(utf8proc_category(0x30000), UTF8PROC_CATEGORY_LO);
}

// The case table scans planes 0-1 only: no cased code point lies beyond.
TEST(RegexDfa, NoCasedCodePointBeyondPlaneOne) {
  size_t found = 0;
  for (uint32_t cp = 0x20000; cp <= 0x10FFFF && found <= 5; ++cp) {
    const auto c = static_cast<utf8proc_int32_t>(cp);
    if (utf8proc_tolower(c) != c || utf8proc_toupper(c) != c) {
      ++found;
      ADD_FAILURE() << "U+" << std::hex << cp;
    }
  }
  // The last cased block (Adlam) is in the scan: U+1E900 lowers to U+1E922.
  EXPECT_EQ(nextok::constraint::regex::case_closed({{0x1E900, 0x1E900}}),
            (nextok::constraint::regex::CodeSet{{0x1E900, 0x1E900}, {0x1E922, 0x1E922}}));
}

TEST(RegexDfa, GroupsNestAtMost1000Deep) {
  // The parser and every later walk of the tree recurse once a group: a
  // pattern of 20,000 nested groups crashed the stack before this limit.
  // Number-range patterns nest one group a digit (400 fractional places).
  const auto nested = [](int n) { return std::string(n, '(') + "a" + std::string(n, ')'); };
  EXPECT_TRUE(Dfa::compile(nested(1000)).matches("a"));
  try {
    Dfa::compile(nested(20000));
    ADD_FAILURE() << "compiled";
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), nextok::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("groups nested deeper than 1000"), std::string::npos);
  }
}

TEST(RegexDfa, CaseTableHoldsEveryCaseMapping) {
  // The table is generated at build time (case_table_gen.cpp); here every
  // mapping utf8proc has must link its code points into one class.
  using nextok::constraint::regex::case_closed;
  using nextok::constraint::regex::CodeSet;
  const auto has = [](const CodeSet& set, uint32_t cp) {
    for (const auto& [lo, hi] : set)
      if (lo <= cp && cp <= hi) return true;
    return false;
  };
  size_t cased = 0;
  for (uint32_t cp = 0; cp <= 0x1FFFF; ++cp) {
    const auto c = static_cast<utf8proc_int32_t>(cp);
    const auto lower = static_cast<uint32_t>(utf8proc_tolower(c));
    const auto upper = static_cast<uint32_t>(utf8proc_toupper(c));
    if (lower == cp && upper == cp) continue;
    ++cased;
    const CodeSet cls = case_closed({{cp, cp}});
    ASSERT_TRUE(has(cls, cp) && has(cls, lower) && has(cls, upper)) << std::hex << cp;
    ASSERT_EQ(case_closed({{lower, lower}}), cls) << std::hex << cp;
  }
  EXPECT_GT(cased, 2500u);
  EXPECT_EQ(case_closed({{'s', 's'}}), (CodeSet{{'S', 'S'}, {'s', 's'}, {0x17F, 0x17F}}));
  EXPECT_EQ(case_closed({{'k', 'k'}}), (CodeSet{{'K', 'K'}, {'k', 'k'}, {0x212A, 0x212A}}));
  EXPECT_EQ(case_closed({{'0', '9'}}), (CodeSet{{'0', '9'}}));
}

TEST(RegexDfa, PythonSyntaxAndFlags) {
  // What Python's re says of each (fullmatch), checked by hand there.
  nextok::constraint::RegexOptions py;
  py.python = true;
  const auto m = [&](const char* p, const std::string& s, bool icase = false, bool dotall = false) {
    auto o = py;
    o.ignore_case = icase;
    o.dot_all = dotall;
    return Dfa::compile(p, o).matches(s);
  };
  EXPECT_TRUE(m("a.b", "a\rb"));  // Python's dot excludes only \n
  EXPECT_FALSE(m("a.b", "a\nb"));
  EXPECT_TRUE(m("a.b", "a\nb", false, true));
  EXPECT_TRUE(m("(?s)a.b", "a\nb"));
  EXPECT_TRUE(m("(?P<x>ab)+", "abab"));
  EXPECT_TRUE(m("x{,2}", ""));
  EXPECT_TRUE(m("x{,2}", "xx"));
  EXPECT_FALSE(m("x{,2}", "xxx"));
  EXPECT_TRUE(m("\\w+", "\xc3\xa9t\xc3\xa9"));  // Unicode \w
  EXPECT_FALSE(m("(?a)\\w+", "\xc3\xa9"));
  EXPECT_FALSE(m("\\s", "\xef\xbb\xbf"));  // U+FEFF is not str.isspace()
  EXPECT_TRUE(m("\\U0001F600", "\xf0\x9f\x98\x80"));
  // IGNORECASE: s, S and U+017F are one class; k, K and U+212A too.
  EXPECT_TRUE(m("s", "\xc5\xbf", true));
  EXPECT_TRUE(m("(?i)K", "\xe2\x84\xaa"));
  EXPECT_TRUE(m("[a-c]+", "AbC", true));
  EXPECT_FALSE(m("[^a]", "A", true));  // the class is closed before it is negated
  EXPECT_TRUE(m("(?i:a)b", "Ab"));
  EXPECT_FALSE(m("(?i:a)b", "AB"));
  // Rust's escapes, which llguidance's Lark terminals use and Python's re
  // refuses: \x{...}, \u{...}, \p{...}, \P{...} and \pL.
  EXPECT_TRUE(m("\\x{41}\\u{1F600}", "A\xf0\x9f\x98\x80"));
  EXPECT_TRUE(m("\\p{L}+",
                "\xc3\xa9"
                "a"));
  EXPECT_FALSE(m("\\p{L}", "1"));
  EXPECT_TRUE(m("\\P{L}", "1"));
  EXPECT_TRUE(m("\\pL\\pN", "a1"));
  EXPECT_TRUE(m("[\\p{Lu}\\d]+", "A1"));
  EXPECT_THROW(Dfa::compile("\\x{}", py), nextok::Error);
  EXPECT_THROW(Dfa::compile("(?m)a", py), nextok::Error);
  EXPECT_THROW(Dfa::compile("(?P=x)", py), nextok::Error);
  EXPECT_THROW(Dfa::compile("(?<=a)b", py), nextok::Error);
  // Without python, only a leading (?i) is read (see below); others stay
  // unsupported.
  EXPECT_THROW(Dfa::compile("(?s)a"), nextok::Error);
  EXPECT_THROW(Dfa::compile("b(?i)a"), nextok::Error);
}

// One quantifier an atom: ECMA-262 throws "nothing to repeat" on a second
// (as JavaScript's RegExp does), Python reads a++ as possessive (a
// different language) and a** as "multiple repeat". A lazy '?' and an
// Annex B literal '{' are no second quantifier.
TEST(RegexDfa, AQuantifierAfterAQuantifierIsAnError) {
  nextok::constraint::RegexOptions py;
  py.python = true;
  for (const char* p : {"a++", "a**", "a*+", "a?+", "a{2}+", "a+*", "a{2}{3}", "a+?+", "(ab)*?*"}) {
    EXPECT_THROW(Dfa::compile(p), nextok::Error) << p;
    EXPECT_THROW(Dfa::compile(p, py), nextok::Error) << p;
  }
  EXPECT_TRUE(Dfa::compile("a+?").matches("aa"));
  EXPECT_TRUE(Dfa::compile("a{2}?").matches("aa"));
  EXPECT_TRUE(Dfa::compile("a*{").matches("aa{"));  // '{' no count: a literal
  EXPECT_TRUE(Dfa::compile("a{,3}").matches("a{,3}"));
  EXPECT_TRUE(Dfa::compile("(?:a+)+").matches("aaa"));
  EXPECT_TRUE(Dfa::compile("a{,3}", py).matches("aaa"));
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
  // An anchor asserts the input's start or end wherever it stands.
  const Dfa either = Dfa::compile("a|^b", search);
  EXPECT_TRUE(either.matches("xa"));
  EXPECT_TRUE(either.matches("bx"));
  EXPECT_FALSE(either.matches("xb"));
  EXPECT_TRUE(Dfa::compile("x^").empty());
  EXPECT_TRUE(Dfa::compile("a$b", search).empty());
  const Dfa both = Dfa::compile("$^", search);
  EXPECT_TRUE(both.matches(""));
  EXPECT_FALSE(both.matches("a"));
}

// At a search's open side a bounded repetition is cut to its fewest
// copies (the rest is absorbed by the open side): the languages stay
// PCRE2's, and the automaton stays small where run lengths would multiply.
TEST(RegexDfa, OpenSidesOfASearchCutRepetitions) {
  const std::vector<std::string> texts = all_strings({"a", "b", "c", "-"}, 7);
  for (const char* p : {"[ab][ab-]{2,5}", "(ab|c){2,4}", "a{2,}b?", "^a{1,3}", "a{1,3}$",
                        "(a{1,3}|b-)c{0,3}", "^(a{2,4}|c)|b{1,2}$", "a{0,2}"}) {
    expect_both_modes_equal_pcre2(p, texts);
    if (::testing::Test::HasFatalFailure()) return;
  }
  nextok::constraint::RegexOptions search;
  search.full_match = false;
  search.json_string = true;
  search.max_states = 2000;
  const Dfa d = Dfa::compile(R"([A-Za-z0-9][A-Za-z0-9\-_]{3,31})", search);
  EXPECT_LT(d.states(), 100u);
  EXPECT_TRUE(d.matches(R"(" ab-cd ")"));
  EXPECT_FALSE(d.matches(R"(" ab- x-_ ")"));
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

// \p{...} as ECMA-262's u mode reads it (tests/python/test_regex_property.py
// checks every category against regress); here the forms and their algebra.
TEST(RegexDfa, UnicodePropertyClasses) {
  const Dfa letter = Dfa::compile("\\p{L}+");
  EXPECT_TRUE(letter.matches("abc\xC3\xA9\xE4\xB8\xAD"));  // a, b, c, U+00E9, U+4E2D
  EXPECT_FALSE(letter.matches("a1"));
  for (const char* same : {"\\p{Letter}+", "\\p{gc=L}+", "\\p{General_Category=Letter}+",
                           "[\\p{Lu}\\p{Ll}\\p{Lt}\\p{Lm}\\p{Lo}]+", "[^\\P{L}]+"}) {
    const Dfa d = Dfa::compile(same);
    for (const char* text : {"abc", "\xC3\xA9", "1", "_", " ", "\xE2\x82\xAC", "A\xCC\x81"}) {
      EXPECT_EQ(d.matches(text), letter.matches(text)) << same << " on " << text;
    }
  }
  const Dfa not_letter = Dfa::compile("\\P{L}");
  EXPECT_TRUE(not_letter.matches("1"));
  EXPECT_TRUE(not_letter.matches("\xE2\x82\xAC"));  // U+20AC, Sc
  EXPECT_FALSE(not_letter.matches("x"));
  EXPECT_TRUE(Dfa::compile("\\p{Sc}").matches("\xE2\x82\xAC"));
  EXPECT_TRUE(Dfa::compile("\\p{Nd}").matches("\xD9\xA3"));  // U+0663, Arabic-Indic three
  EXPECT_TRUE(Dfa::compile("\\p{Zs}").matches("\xC2\xA0"));
  EXPECT_FALSE(Dfa::compile("\\p{ASCII}").matches("\xC2\xA0"));
  EXPECT_EQ(Dfa::compile("[^\\p{Any}]").start(), Dfa::kDead);
}

// Lookaheads opening an anchored pattern test the input from its start:
// products of DFAs (tests/python/test_pattern_extensions.py checks random
// ones against regress and Python re).
TEST(RegexDfa, LeadingLookaheadsAreProducts) {
  nextok::constraint::RegexOptions search;
  search.full_match = false;
  const Dfa pw = Dfa::compile("^(?=.*[A-Z])(?=.*\\d)(?!.*\\s).{4,}$", search);
  EXPECT_TRUE(pw.matches("abC1"));
  EXPECT_FALSE(pw.matches("abc1"));
  EXPECT_FALSE(pw.matches("abCd"));
  EXPECT_FALSE(pw.matches("aC1"));
  EXPECT_FALSE(pw.matches("a C1"));
  const Dfa arn = Dfa::compile("^(?!aws:)[a-z:]+", search);
  EXPECT_TRUE(arn.matches("awsx:"));
  EXPECT_FALSE(arn.matches("aws:x"));
  // Full match (Grammar::regex): the tests still read a prefix.
  const Dfa full = Dfa::compile("^(?=a)[a-c]{2}");
  EXPECT_TRUE(full.matches("ab"));
  EXPECT_FALSE(full.matches("ba"));
  EXPECT_FALSE(full.matches("abc"));
  // A class holding ')' or '|' does not end the test or leave its scope.
  EXPECT_TRUE(Dfa::compile("^(?=[)|]).+", search).matches(")x"));
  EXPECT_FALSE(Dfa::compile("^(?=[)|]).+", search).matches("x"));
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
                        Case{"^a(?=b)", nextok::ErrorCode::kUnsupported},
                        Case{"^(?=a)b|c", nextok::ErrorCode::kUnsupported},
                        Case{"a\\b", nextok::ErrorCode::kUnsupported},
                        Case{"a^*", nextok::ErrorCode::kInvalidArgument},
                        Case{"\\p{Latin}", nextok::ErrorCode::kUnsupported},
                        Case{"\\pL", nextok::ErrorCode::kInvalidArgument},
                        Case{"\\p{L", nextok::ErrorCode::kInvalidArgument},
                        Case{"(a)${2}", nextok::ErrorCode::kInvalidArgument}}) {
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

std::filesystem::path llama_dir() {
#ifdef NEXTOK_TOKENIZERS_DIR
  return std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1";
#else
  return "/nonexistent";
#endif
}

TEST(RegexDfa, TrieWalkEqualsBruteForceOnARealVocabulary) {
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(llama_dir() / "tokenizer.json"), llama_dir());
  const auto vocab = nextok::load_vocabulary(llama_dir());
  const nextok::constraint::TokenTrie trie(*vocab);
  for (const char* p :
       {"[0-9]{1,4}(\\.[0-9]+)?", " ?(true|false|null)", "\"[a-z ]*\"", "\\p{L}*", "[^\"\\\\]*"}) {
    const Dfa dfa = Dfa::compile(p);
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
