// The compile budget (ConstraintLimits::max_compile_bytes, max_compile_ms,
// cancel) holds for every front-end, and the caches that outlive a compile
// are bounded by bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "constraint/engine/leaf_cache.hpp"
#include "constraint/engine/token_index_impl.hpp"
#include "constraint/regex/compile_budget.hpp"
#include "constraint/regex/dfa.hpp"
#include "constraint/schema/dfa_interner.hpp"
#include "grammar_test_util.hpp"
#include "nextok/error.hpp"
#include "nextok/grammar.hpp"
#include "nextok/json_schema.hpp"

namespace {

using nextok::ConstraintLimits;
using nextok::Error;
using nextok::Grammar;
using nextok::JsonConstraintOptions;
using nextok::JsonGrammar;
using nextok::constraint::Dfa;
using nextok::grammar_test::small_index;

// (a|b)*a(a|b){12}: the 13th byte from the end is an a, which a DFA can
// only know by remembering the last 13 bytes: 2^13 states, 8 MiB of table.
// Schemas intern their pattern DFAs for the process, so each test that must
// build one uses letters of its own.
std::string wide(char a, char b) {
  const std::string ab = std::string("(") + a + "|" + b + ")";
  return ab + "*" + a + ab + "{12}";
}

std::string param_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.param() + ": " + e.what();
  }
  return "no error";
}

TEST(CompileBudget, SchemaPastTheByteBudgetFailsNamingIt) {
  const std::string schema = R"({"type":"string","pattern":"^)" + wide('a', 'b') + R"($"})";
  // First under a tight budget: a failed build leaves nothing interned.
  JsonConstraintOptions tight;
  tight.limits.max_compile_bytes = size_t{4} << 20;
  const std::string e = param_of([&] { JsonGrammar::from_schema(small_index(), schema, tight); });
  // The schema compiler names where it stopped (the JSON pointer).
  EXPECT_EQ(e.rfind("/pattern: ", 0), 0u) << e;
  EXPECT_NE(e.find("max_compile_bytes = 4194304 bytes (4 MiB)"), std::string::npos) << e;

  const auto g = JsonGrammar::from_schema(small_index(), schema);
  EXPECT_GT(g->compile_bytes(), size_t{8} << 20);  // the table alone
  EXPECT_LT(g->compile_bytes(), size_t{64} << 20);
}

TEST(CompileBudget, ParsedSchemaTextCounts) {
  // A large enum: what the parser builds is charged before any automaton.
  std::string schema = R"({"enum":[)";
  for (int i = 0; i < 20000; ++i) schema += (i ? ",\"" : "\"") + std::string(40, 'a') + "\"";
  schema += "]}";
  ConstraintLimits l;
  l.max_compile_bytes = size_t{1} << 20;
  JsonConstraintOptions o;
  o.limits = l;
  EXPECT_EQ(param_of([&] {
              JsonGrammar::from_schema(small_index(), schema, o);
            }).rfind("max_compile_bytes", 0),
            0u);
}

TEST(CompileBudget, EveryGrammarFrontEndIsBounded) {
  ConstraintLimits tight;
  tight.max_compile_bytes = size_t{2} << 20;
  auto fails = [](const std::function<void()>& f) {
    return param_of(f).rfind("max_compile_bytes", 0) == 0;
  };
  EXPECT_TRUE(fails([&] { Grammar::regex(small_index(), wide('a', 'b'), tight); }));
  EXPECT_GT(Grammar::regex(small_index(), wide('a', 'b'))->compile_bytes(), size_t{8} << 20);
  // A regular GBNF grammar runs on its DFA, built under the budget.
  const std::string ab = R"(("a" | "b"))";
  std::string gbnf = "root ::= " + ab + "* \"a\"";
  for (int i = 0; i < 12; ++i) gbnf += " " + ab;
  EXPECT_TRUE(fails([&] { Grammar::gbnf(small_index(), gbnf, tight); }));
  EXPECT_GT(Grammar::gbnf(small_index(), gbnf)->compile_bytes(), size_t{8} << 20);
  // A choice among many strings: its NFA and DFA.
  std::vector<std::string> strings;
  for (int i = 0; i < 5000; ++i) strings.push_back("c-" + std::to_string(i * 7919));
  EXPECT_TRUE(fails([&] { Grammar::choice(small_index(), strings, tight); }));
  EXPECT_GT(Grammar::choice(small_index(), strings)->compile_bytes(), tight.max_compile_bytes);
}

TEST(CompileBudget, RegexCompilesHearTheCancelFlag) {
  // Regex and choice grammars had no budget check of their own: the scope's
  // checks inside the subset construction now stop them.
  std::atomic<bool> cancel{true};
  ConstraintLimits l;
  l.cancel = &cancel;
  EXPECT_EQ(
      param_of([&] { Grammar::regex(small_index(), wide('a', 'b'), l); }).rfind("cancelled", 0),
      0u);
  cancel = false;
  EXPECT_NO_THROW(Grammar::regex(small_index(), wide('a', 'b'), l));
}

TEST(CompileBudget, NestedScopesShareTheOuterBudget) {
  ConstraintLimits outer_limits;
  outer_limits.max_compile_bytes = 1000;
  nextok::constraint::CompileBudget::Scope outer(outer_limits);
  ConstraintLimits roomy;  // ignored inside the outer scope
  nextok::constraint::CompileBudget::Scope inner(roomy);
  nextok::constraint::CompileBudget::charge(600);
  EXPECT_THROW(nextok::constraint::CompileBudget::charge(600), Error);
  nextok::constraint::CompileBudget::release(600);
  EXPECT_NO_THROW(nextok::constraint::CompileBudget::charge(900));
  EXPECT_EQ(inner.peak_bytes(), 900u);
  EXPECT_EQ(outer.peak_bytes(), 900u);
}

TEST(CompileBudget, LeafCacheStaysWithinItsBytes) {
  using nextok::constraint::LeafCache;
  const auto& trie = small_index()->impl().trie;
  std::vector<Dfa> dfas;
  for (int k = 1; k <= 10; ++k)
    dfas.push_back(Dfa::compile("[a-x0-9 ]*" + std::string(k, 'y'), {}));
  size_t all = 0;
  for (const Dfa& x : dfas) {
    all += nextok::constraint::leaf_entry_bytes(
        *nextok::constraint::build_leaf_entry(trie, {&x, x.start(), 0, false}, nullptr));
  }
  LeafCache cache(all / 3);  // room for about three of the ten
  for (const Dfa& x : dfas) {
    const auto e = cache.get(trie, {&x, x.start(), 0, false});
    const auto fresh =
        nextok::constraint::build_leaf_entry(trie, {&x, x.start(), 0, false}, nullptr);
    EXPECT_EQ(e->inside, fresh->inside);  // restarts never change an answer
    EXPECT_LE(cache.bytes(), all / 3);
  }
  EXPECT_GE(cache.restarts(), 2u);
}

TEST(CompileBudget, InternedDfasAreBoundedByBytes) {
  // A large automaton (8 MiB) is never kept for the process; small distinct
  // ones are kept only up to the interner's total (64 MiB).
  const std::string big = wide('q', 'r');
  EXPECT_FALSE(nextok::constraint::intern_dfa("budget-test:" + big, [&] {
                 return Dfa::compile(big, {});
               }).shared);
  size_t kept = 0;
  for (int k = 0; k < 200; ++k) {
    const std::string p = "(q|r)*q(q|r){8}" + std::to_string(k);  // ~0.5 MiB each
    kept += nextok::constraint::intern_dfa("budget-test:" + p, [&] {
              return Dfa::compile(p, {});
            }).shared;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_LE(kept, 128u);
}

}  // namespace
