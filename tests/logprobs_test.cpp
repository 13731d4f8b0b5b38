#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/bf16.hpp"
#include "test_util.hpp"

using namespace nextok;

TEST(Logprobs, ZeroKDoesNothing) {
  // k == 0 must not even read the logits: a null view would otherwise throw.
  LogitsView bogus;
  EXPECT_FALSE(compute_top_logprobs(bogus, 0, 0).has_value());
}

TEST(Logprobs, MatchesDoublePrecisionLogSoftmax) {
  std::mt19937_64 g(8);
  for (std::size_t v : {5u, 300u, 151936u}) {
    const auto l = test::random_logits(g, v, true);
    double m = -INFINITY;
    for (float x : l) m = std::max(m, static_cast<double>(x));
    double z = 0;
    for (float x : l) z += std::exp(static_cast<double>(x) - m);
    const double lse = m + std::log(z);
    const auto r = compute_top_logprobs(LogitsView::f32(l), 2, 20);
    ASSERT_TRUE(r.has_value());
    EXPECT_NEAR(r->token_logprob, l[2] - lse, 1e-5);
    ASSERT_EQ(r->top.size(), std::min<std::size_t>(20, v));
    // Descending, ties by lower id, and exactly the k best values.
    std::vector<std::pair<float, std::int32_t>> all;
    for (std::size_t i = 0; i < v; ++i) all.emplace_back(-l[i], static_cast<std::int32_t>(i));
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i < r->top.size(); ++i) {
      EXPECT_EQ(r->top[i].token_id, all[i].second) << i;
      EXPECT_NEAR(r->top[i].logprob, -all[i].first - lse, 1e-5);
    }
  }
}

TEST(Logprobs, Bf16UsesTheSameValues) {
  std::mt19937_64 g(9);
  const auto l = test::random_logits(g, 1000, false);
  std::vector<std::uint16_t> b(l.size());
  std::vector<float> rounded(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) {
    b[i] = cpu::f32_to_bf16(l[i]);
    rounded[i] = cpu::bf16_to_f32(b[i]);
  }
  const auto a = compute_top_logprobs(LogitsView::bf16(b), 7, 10);
  const auto c = compute_top_logprobs(LogitsView::f32(rounded), 7, 10);
  EXPECT_EQ(a->token_logprob, c->token_logprob);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(a->top[i].token_id, c->top[i].token_id);
}
