// Top-p over huge nuclei as a cut on the weights (src/sampling/dense_top_p.cpp)
// against the full-sort reference: distributions and draws equal, ties at the
// boundary cut by id, min-p and masks on top, and a row whose sample misses
// the boundary handed to the list path.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_check.hpp"
#include "sampling/dense_top_p.hpp"
#include "test_util.hpp"

using namespace nextok;

TEST(DenseTopP, FlatRowsEqualTheFullSort) {
  std::mt19937_64 g(31);
  Workspace ws, ws_ref;
  auto& counters = detail::dense_top_p_counters();
  counters = {};
  int cases = 0;
  for (std::size_t v : {std::size_t{32768}, std::size_t{151936}}) {
    for (int n = 0; n < 16; ++n, ++cases) {
      const bool ties = n % 2 == 1;  // logits on a grid: boundary tie groups of thousands
      std::vector<float> l = test::random_logits(g, v, false);
      for (float& x : l) x = ties ? std::round(x * 30.0f) / 1000.0f : x * 0.01f;
      SamplerConfig cfg;
      cfg.temperature = std::array<float, 3>{0.7f, 1.0f, 1.5f}[g() % 3];
      cfg.top_p = std::array<float, 4>{0.5f, 0.9f, 0.95f, 0.999f}[g() % 4];
      cfg.min_p = n % 3 == 0 ? 0.985f : 0.0f;  // cuts into a flat row
      std::vector<std::uint32_t> mask;
      if (n % 4 == 0) {
        mask.assign(bitmask_words(v), 0);
        for (std::size_t i = 0; i < v; ++i)
          if (g() % 3 != 0) bitmask_set(mask, i, true);
      }
      test::expect_same_as_reference({LogitsView::f32(l), mask, {}}, cfg, {}, ws, ws_ref, 0, 8);
    }
  }
  // Each case runs the pipeline 1 + 8 times; nearly all must take the cut.
  EXPECT_GE(counters.taken, cases * 9 * 9 / 10) << counters.missed << " missed";
}

TEST(DenseTopP, ABracketThatMissesTheBoundaryFallsBackToTheList) {
  // 2,000 heavy tokens the sample (every 151st id) never sees over a flat body:
  // the sample puts the boundary in the middle of the body, the true one is
  // a sixth of the way down.
  const std::size_t v = 151936;
  std::vector<float> l(v);
  std::mt19937_64 g(5);
  std::normal_distribution<float> body(-3.7f, 0.05f);
  for (float& x : l) x = body(g);
  int heavy = 0;
  for (std::size_t i = 1; heavy < 2000; i += 7)
    if (i % 151 != 0) l[i] = 0.0f, ++heavy;
  SamplerConfig cfg;
  cfg.temperature = 1.0f;
  cfg.top_p = 0.5f;
  auto& counters = detail::dense_top_p_counters();
  counters = {};
  Workspace ws, ws_ref;
  test::expect_same_as_reference({LogitsView::f32(l), {}, {}}, cfg, {}, ws, ws_ref, 0, 4);
  EXPECT_GE(counters.missed, 1);
  EXPECT_EQ(counters.taken, 0);
}
