// The regular-fragment rewriting's budget is counted work, not wall time:
// the same grammar always gets the same rewriting, however busy the
// machine, and so the same masks' costs.
#include <gtest/gtest.h>

#include <string>

#include "constraint/cfg/cfg.hpp"
#include "constraint/cfg/gbnf.hpp"
#include "constraint/cfg/regular_fragments.hpp"
#include "nextok/json_schema.hpp"

namespace {

using nextok::constraint::cfg::Cfg;
using nextok::constraint::cfg::FragmentBudget;

// A recursive root around an ambiguous regular part: runs of letters with
// optional spaces between them, whose ends Earley cannot tell apart.
constexpr const char* kGrammar =
    "root ::= \"(\" root \")\" | words\n"
    "words ::= ([a-z]+ \" \"?)*\n";

Cfg parsed() {
  Cfg g = nextok::constraint::cfg::parse_gbnf(kGrammar, nextok::ConstraintLimits{});
  nextok::constraint::cfg::prune(g);
  return g;
}

// The work spent and the rule count after rewriting with `work` steps.
std::pair<size_t, size_t> rewrite(size_t work) {
  Cfg g = parsed();
  FragmentBudget budget;
  budget.work = work;
  nextok::constraint::cfg::determinize_regular_fragments(g, budget);
  return {work - budget.work, g.rules.size()};
}

TEST(RegularFragments, WorkIsCountedAndTheSameEveryTime) {
  const size_t written = parsed().rules.size();
  const auto [spent, rules] = rewrite(FragmentBudget{}.work);
  ASSERT_GT(spent, 0u);
  EXPECT_GT(rules, written) << "the ambiguous part was not rewritten";
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(rewrite(FragmentBudget{}.work), std::make_pair(spent, rules));
}

TEST(RegularFragments, PastItsWorkTheGrammarStaysAsWritten) {
  const size_t written = parsed().rules.size();
  const size_t needed = rewrite(FragmentBudget{}.work).first;
  const auto [spent, rules] = rewrite(needed - 1);
  EXPECT_EQ(spent, needed - 1) << "a step short must spend all it has";
  EXPECT_EQ(rules, written);
  EXPECT_GT(rewrite(needed).second, written);
}

}  // namespace
