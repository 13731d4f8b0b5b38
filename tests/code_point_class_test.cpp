// Code-point classes as grammars (code_point_class.cpp): the tree of UTF-8
// byte sets reads exactly the class's code points, checked against the set
// itself for every code point, and its shared parts stay shared in a
// regular fragment's automaton.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "constraint/cfg/cfg.hpp"
#include "constraint/cfg/gbnf.hpp"
#include "constraint/cfg/regular_fragments.hpp"

namespace {

using nextok::constraint::Dfa;
using nextok::constraint::cfg::Cfg;
using nextok::constraint::cfg::FragmentBudget;
using nextok::constraint::cfg::Symbol;
using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 63));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 63));
    s += static_cast<char>(0x80 | (cp & 63));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 63));
    s += static_cast<char>(0x80 | ((cp >> 6) & 63));
    s += static_cast<char>(0x80 | (cp & 63));
  }
  return s;
}

// Sorted disjoint ranges: mostly short ones spread over all planes, as
// Unicode's letter classes are (Python's \w is ~750 ranges).
Ranges random_ranges(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);  // 32-bit draws
  std::vector<uint32_t> cuts;
  for (size_t k = 0; k < 2 * n; ++k) {
    const uint32_t plane_end = rng() % 4 == 0 ? 0x10FFFF : (rng() % 2 == 0 ? 0xFFFF : 0x7FF);
    cuts.push_back(static_cast<uint32_t>(rng() % (plane_end + 1)));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  Ranges out;
  for (size_t k = 0; k + 1 < cuts.size(); k += 2) out.push_back({cuts[k], cuts[k + 1] - 1});
  return out;
}

bool in(const Ranges& set, uint32_t cp) {
  const auto it = std::upper_bound(set.begin(), set.end(), std::pair{cp, UINT32_MAX});
  return it != set.begin() && cp <= std::prev(it)->second;
}

Dfa dfa_of(const Cfg& g) {
  FragmentBudget budget;
  budget.max_states = 1 << 20;
  auto d = nextok::constraint::cfg::regular_grammar_dfa(g, budget);
  EXPECT_TRUE(d.has_value());
  return d ? std::move(*d) : Dfa{};
}

void expect_reads_exactly(const Ranges& set) {
  Cfg g;
  g.root = nextok::constraint::cfg::add_code_point_class(g, set, "c");
  const Dfa d = dfa_of(g);
  // Every code point of the first three planes, past them every range's
  // ends and neighbours and every 61st (the whole space took seconds in
  // the sanitizer build).
  std::vector<uint32_t> cps;
  for (uint32_t cp = 0; cp < 0x30000; ++cp) cps.push_back(cp);
  for (uint32_t cp = 0x30000; cp <= 0x10FFFF; cp += 61) cps.push_back(cp);
  for (auto [lo, hi] : set) {
    for (uint32_t cp : {lo - 1, lo, hi, hi + 1})
      if (cp <= 0x10FFFF) cps.push_back(cp);
  }
  cps.push_back(0x10FFFF);
  size_t wrong = 0;
  for (uint32_t cp : cps) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (d.matches(utf8(cp)) != in(set, cp) && ++wrong <= 5)
      ADD_FAILURE() << "U+" << std::hex << cp << " should " << (in(set, cp) ? "" : "not ")
                    << "match";
  }
  EXPECT_EQ(wrong, 0u);
  // Never an overlong, a surrogate, past U+10FFFF, or two characters.
  for (const char* bad : {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\x80", "\xE0\xA0"})
    EXPECT_FALSE(d.matches(bad)) << "a bad sequence matched";
  if (!set.empty()) {
    EXPECT_FALSE(d.matches(utf8(set[0].first) + utf8(set[0].first)));
  }
}

TEST(CodePointClass, ReadsExactlyItsCodePoints) {
  expect_reads_exactly({{0, 0x10FFFF}});
  expect_reads_exactly(
      {{0x7F, 0x80}, {0x7FF, 0x800}, {0xD7FF, 0xE000}, {0xFFFF, 0x10000}, {0x10FFFF, 0x10FFFF}});
  expect_reads_exactly({{'a', 'z'}, {0xE9, 0xE9}, {0x3B1, 0x3C9}, {0x4E00, 0x9FFF}});
  for (uint32_t seed = 1; seed <= 4; ++seed) expect_reads_exactly(random_ranges(seed, 700));
}

TEST(CodePointClass, FirstBytesAreAlternativesNotSequences) {
  // Spelled flat, a class had one alternative a UTF-8 sequence (~900 for
  // 700 ranges), all of them predicted wherever it is used.
  const Ranges set = random_ranges(7, 700);
  Cfg g;
  const uint32_t c = nextok::constraint::cfg::add_code_point_class(g, set, "c");
  EXPECT_LE(g.rules[c].size(), 64u) << "one alternative per group of first bytes";
}

TEST(CodePointClass, OneAutomatonForEveryUseWithTheSameEnd) {
  // P ::= P c | c: both uses of c end where P loops, so its automaton is
  // built once, and c+ needs no more states than c and its loop.
  const Ranges set = random_ranges(11, 700);
  Cfg one, plus;
  one.root = nextok::constraint::cfg::add_code_point_class(one, set, "c");
  const auto c = static_cast<Symbol>(nextok::constraint::cfg::add_code_point_class(plus, set, "c"));
  plus.root = plus.add_nonterminal("p");
  plus.rules[plus.root] = {{static_cast<Symbol>(plus.root), c}, {c}};
  const size_t a = dfa_of(one).states(), b = dfa_of(plus).states();
  EXPECT_LE(b, a + 1) << "c+ took " << b << " states, c " << a;
}

}  // namespace
