// The bounded-tail pass (src/sampling/bounded_tail.cpp) against the full-sort
// reference: on peaked rows, where it decides, every distribution and draw is
// the reference's; where Z's tail decides the top-p cut, it hands over to the
// full pass and the result is still the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_check.hpp"
#include "sampling/bounded_tail.hpp"
#include "test_util.hpp"

using namespace nextok;

namespace {

// A model-like row: a 256-token head at 18 - 2.2·ln(1+j) on random ids over
// an N(0, 2.5²) body (the `realistic` benchmark workload's shape).
std::vector<float> peaked_row(std::mt19937_64& g, std::size_t v) {
  std::normal_distribution<float> body(0.0f, 2.5f);
  std::vector<float> l(v);
  for (float& x : l) x = body(g);
  for (int j = 0; j < 256; ++j) l[g() % v] = 18.0f - 2.2f * std::log1p(static_cast<float>(j));
  return l;
}

}  // namespace

TEST(BoundedTail, DecidesPeakedRowsExactlyAsTheFullSort) {
  std::mt19937_64 g(2024);
  Workspace ws, ws_ref;
  auto& counters = detail::bounded_tail_counters();
  counters = {};
  int cases = 0;
  for (std::size_t v : {std::size_t{32000}, std::size_t{151936}}) {
    for (int n = 0; n < 24; ++n, ++cases) {
      std::vector<float> l = peaked_row(g, v);
      SamplerConfig cfg;
      cfg.temperature = std::array<float, 4>{0.5f, 0.7f, 1.0f, 1.3f}[g() % 4];
      cfg.top_p = std::array<float, 4>{0.0f, 0.5f, 0.9f, 0.99f}[g() % 4];
      cfg.top_k = std::array<std::int32_t, 3>{0, 20, 50}[g() % 3];
      cfg.min_p = std::array<float, 3>{0.0f, 0.05f, 0.2f}[g() % 3];
      if (cfg.top_p == 0.0f && cfg.top_k == 0 && cfg.min_p == 0.0f) cfg.top_p = 0.9f;
      cfg.filter_order = g() % 3 == 0 ? FilterOrder::kTopKFirst : FilterOrder::kSpec;
      PenaltyConfig pen;
      std::vector<std::int32_t> hist;
      if (n % 2 == 0) {
        pen.repetition_penalty = 1.1f;
        pen.presence_penalty = 0.5f;
        for (int i = 0; i < 20; ++i) hist.push_back(static_cast<std::int32_t>(g() % v));
      }
      std::vector<std::uint32_t> mask;
      if (n % 5 == 0) {  // a grammar's mask over half the vocabulary
        mask.assign(bitmask_words(v), 0);
        for (std::size_t i = 0; i < v; i += 2) bitmask_set(mask, i, true);
      }
      const StepInput in{LogitsView::f32(l), mask, hist};
      test::expect_same_as_reference(in, cfg, pen, ws, ws_ref, n, 1);
    }
  }
  // Each case runs the pipeline twice (distribution, draw). The pass must
  // actually decide most peaked rows, or this test checks nothing new.
  EXPECT_GE(counters.decided, cases)
      << counters.undecided << " undecided, " << counters.declined << " declined";
}

TEST(BoundedTail, HandsATopPCutInsideZsBoundToTheFullPass) {
  // Head weights 1, 1/2, 1/4, ... and 30,000 tokens just below the cut
  // (e ≈ e^-20.6 each): Z is known only within ~6e-5. With top_p·Z within
  // that of 1.5, the mass before the third token, the cut is undecided.
  const std::size_t v = 32768;
  std::vector<float> l(v, -1000.0f);
  for (int j = 0; j < 8; ++j)
    l[static_cast<std::size_t>(100 + j)] = 10.0f - static_cast<float>(j) * std::log(2.0f);
  for (std::size_t i = 1000; i < 31000; ++i) l[i] = 10.0f - 20.6f;
  double z = 0.0;
  for (float x : l) z += std::exp(static_cast<double>(x) - 10.0);
  for (double target : {1.5, 1.75}) {
    SamplerConfig cfg;
    cfg.temperature = 1.0f;
    cfg.top_p = static_cast<float>(target / z);
    auto& counters = detail::bounded_tail_counters();
    counters = {};
    Workspace ws, ws_ref;
    test::expect_same_as_reference({LogitsView::f32(l), {}, {}}, cfg, {}, ws, ws_ref, 3, 1);
    EXPECT_GE(counters.undecided, 1) << target;
    EXPECT_EQ(counters.decided, 0) << target;
  }
}

TEST(BoundedTail, DeclinesFlatRows) {
  std::mt19937_64 g(7);
  std::vector<float> l = test::random_logits(g, 65536, false);
  for (float& x : l) x *= 0.01f;
  SamplerConfig cfg;
  cfg.temperature = 1.0f;
  cfg.top_p = 0.95f;
  auto& counters = detail::bounded_tail_counters();
  counters = {};
  Workspace ws, ws_ref;
  test::expect_same_as_reference({LogitsView::f32(l), {}, {}}, cfg, {}, ws, ws_ref, 1, 1);
  EXPECT_EQ(counters.decided, 0);
  EXPECT_GE(counters.declined, 1);
}
