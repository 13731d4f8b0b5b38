// χ² goodness of fit: tokens drawn by sample_token follow
// sampling_distribution. Fixed seeds, so the result is deterministic.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.hpp"

using namespace nextok;
using nextok::test::Chi2;
using nextok::test::chi2;
using nextok::test::critical;

namespace {

Chi2 run(const std::vector<float>& logits, const SamplerConfig& cfg, int draws,
         const std::vector<double>* distort = nullptr) {
  Workspace ws;
  const StepInput in{LogitsView::f32(logits), {}, {}};
  const Distribution d = sampling_distribution(in, cfg, {}, ws);
  std::vector<double> expected(logits.size(), 0.0), observed(logits.size(), 0.0);
  for (std::size_t i = 0; i < d.ids.size(); ++i)
    expected[static_cast<std::size_t>(d.ids[i])] = static_cast<double>(d.probs[i]) * draws;
  if (distort != nullptr) {
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] *= (*distort)[i];
  }
  Pcg32 rng = Pcg32::for_seed(cfg.seed_or_default());
  for (int i = 0; i < draws; ++i)
    observed[static_cast<std::size_t>(sample_token(in, cfg, {}, rng, ws))] += 1;
  return chi2(expected, observed);
}

// The filtered case shared by the test and its negative control.
struct FilteredCase {
  std::vector<float> logits;
  SamplerConfig config;
};

FilteredCase filtered_v111() {
  std::mt19937_64 g(3);
  FilteredCase f{test::random_logits(g, 111, false), {}};
  f.config.temperature = 0.9f;
  f.config.top_p = 0.97f;
  f.config.top_k = 60;
  f.config.min_p = 0.001f;
  f.config.seed = 2024;
  return f;
}

}  // namespace

TEST(Chi2, FilteredDistributionV111) {
  const FilteredCase f = filtered_v111();
  const Chi2 r = run(f.logits, f.config, 200000);
  ASSERT_GT(r.df, 10);
  EXPECT_LT(r.stat, critical(r.df)) << "df=" << r.df;
}

TEST(Chi2, DenseTemperatureOnlyV4096MlxOrder) {
  std::mt19937_64 g(4);
  auto l = test::random_logits(g, 4096, false);
  for (float& x : l) x *= 0.3f;
  SamplerConfig c;
  c.temperature = 1.3f;
  c.filter_order = FilterOrder::kMlxLm;
  c.seed = 99;
  const Chi2 r = run(l, c, 300000);
  ASSERT_GT(r.df, 1000);
  EXPECT_LT(r.stat, critical(r.df)) << "df=" << r.df;
}

// Negative control: the same draws against a distribution off by ±3% per
// token must be rejected, so the test above can fail.
TEST(Chi2, RejectsAWrongDistribution) {
  const FilteredCase f = filtered_v111();
  std::vector<double> distort(111);
  for (std::size_t i = 0; i < distort.size(); ++i) distort[i] = i % 2 == 0 ? 1.03 : 0.97;
  const Chi2 r = run(f.logits, f.config, 200000, &distort);
  EXPECT_GT(r.stat, critical(r.df));
}
