// Known-answer tests per stage. Probability vectors and expected survivors
// are taken from the spec and from llama.cpp's test-sampling cases.
#include <gtest/gtest.h>

#include <map>

#include "test_util.hpp"

using namespace nextok;
using nextok::test::probs_to_logits;

namespace {

std::map<std::int32_t, float> dist_of(const std::vector<float>& logits, const SamplerConfig& c,
                                      const PenaltyConfig& p = {},
                                      std::vector<std::int32_t> history = {}) {
  Workspace ws;
  const StepInput in{LogitsView::f32(logits), {}, history};
  const Distribution d = sampling_distribution(in, c, p, ws);
  std::map<std::int32_t, float> m;
  for (std::size_t i = 0; i < d.ids.size(); ++i) m[d.ids[i]] = d.probs[i];
  return m;
}

void expect_dist(const std::map<std::int32_t, float>& got,
                 const std::map<std::int32_t, float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, p] : want) {
    ASSERT_TRUE(got.count(id)) << "token " << id << " missing";
    EXPECT_NEAR(got.at(id), p, 2e-6) << "token " << id;
  }
}

SamplerConfig t1() {
  SamplerConfig c;
  c.temperature = 1.0f;
  return c;
}

const std::vector<float> kP = {0.1f, 0.2f, 0.3f, 0.4f};

}  // namespace

TEST(Stages, SoftmaxAtTemperatureOne) {
  expect_dist(dist_of(probs_to_logits(kP), t1()), {{0, 0.1f}, {1, 0.2f}, {2, 0.3f}, {3, 0.4f}});
}

TEST(Stages, TemperatureSharpens) {
  SamplerConfig c = t1();
  c.temperature = 0.5f;  // p^2 renormalised
  expect_dist(dist_of(probs_to_logits(kP), c),
              {{0, 0.01f / 0.3f}, {1, 0.04f / 0.3f}, {2, 0.09f / 0.3f}, {3, 0.16f / 0.3f}});
}

TEST(Stages, TopKKnownAnswers) {
  SamplerConfig c = t1();
  c.top_k = 1;
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 1.0f}});
  c.top_k = 3;
  expect_dist(dist_of(probs_to_logits(kP), c),
              {{3, 0.4f / 0.9f}, {2, 0.3f / 0.9f}, {1, 0.2f / 0.9f}});
  c.top_k = 4;  // k >= V is a no-op
  EXPECT_EQ(dist_of(probs_to_logits(kP), c).size(), 4u);
}

TEST(Stages, TopPKnownAnswers) {
  SamplerConfig c = t1();
  c.top_p = 1e-6f;
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 1.0f}});
  c.top_p = 0.8f;
  expect_dist(dist_of(probs_to_logits(kP), c),
              {{3, 0.4f / 0.9f}, {2, 0.3f / 0.9f}, {1, 0.2f / 0.9f}});
  c.top_p = 0.5f;
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 0.4f / 0.7f}, {2, 0.3f / 0.7f}});
  c.top_p = 1.0f;
  EXPECT_EQ(dist_of(probs_to_logits(kP), c).size(), 4u);
}

TEST(Stages, TopPZeroAndAtLeastOneAreOffInEveryOrder) {
  // Only 0 < top_p < 1 filters: 0 is mlx-lm's default "off", as is 1.
  for (FilterOrder order : {FilterOrder::kSpec, FilterOrder::kMlxLm, FilterOrder::kTopKFirst}) {
    for (std::int32_t k : {0, 3}) {
      SamplerConfig off = t1();
      off.filter_order = order;
      off.top_k = k;
      const auto want = dist_of(probs_to_logits(kP), off);
      EXPECT_EQ(want.size(), k == 0 ? 4u : 3u);
      for (float p : {0.0f, -0.0f, 1.0f, 1.5f}) {
        SamplerConfig c = off;
        c.top_p = p;
        expect_dist(dist_of(probs_to_logits(kP), c), want);
      }
    }
  }
}

TEST(Stages, MinPKnownAnswers) {
  SamplerConfig c = t1();
  c.min_p = 0.26f;  // cutoff 0.104
  expect_dist(dist_of(probs_to_logits(kP), c),
              {{3, 0.4f / 0.9f}, {2, 0.3f / 0.9f}, {1, 0.2f / 0.9f}});
  c.min_p = 0.74f;  // cutoff 0.296
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 0.4f / 0.7f}, {2, 0.3f / 0.7f}});
  c.min_p = 0.76f;  // cutoff 0.304
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 1.0f}});
}

TEST(Stages, SpecTopPBreaksTiesByAscendingSortOrder) {
  // probs 0.25 (id 0), 0.25 (id 1), 0.5 (id 2); ascending (p, id) puts id 0
  // first, so at the boundary id 1 survives and id 0 does not.
  SamplerConfig c = t1();
  c.top_p = 0.6f;
  expect_dist(dist_of(probs_to_logits({0.25f, 0.25f, 0.5f}), c),
              {{2, 0.5f / 0.75f}, {1, 0.25f / 0.75f}});
  c.filter_order = FilterOrder::kMlxLm;  // mlx-lm keeps the whole tie group
  expect_dist(dist_of(probs_to_logits({0.25f, 0.25f, 0.5f}), c),
              {{2, 0.5f}, {1, 0.25f}, {0, 0.25f}});
}

TEST(Stages, TopKTiesGoToLowestIds) {
  SamplerConfig c = t1();
  c.top_k = 2;
  const auto d = dist_of({1.0f, 3.0f, 3.0f, 3.0f, 0.0f}, c);
  expect_dist(d, {{1, 0.5f}, {2, 0.5f}});
}

TEST(Stages, FilterOrderChangesTheResultAwayFromTemperatureOne) {
  SamplerConfig c = t1();
  c.temperature = 0.5f;
  c.top_p = 0.8f;
  // spec: T first: probs ∝ p^2 = [1,4,9,16]/30; 0.533 + 0.3 >= 0.8 keeps two.
  expect_dist(dist_of(probs_to_logits(kP), c), {{3, 16.0f / 25.0f}, {2, 9.0f / 25.0f}});
  // mlx_lm: top-p on T=1 keeps three, then T=0.5 squares them.
  c.filter_order = FilterOrder::kMlxLm;
  expect_dist(dist_of(probs_to_logits(kP), c),
              {{3, 16.0f / 29.0f}, {2, 9.0f / 29.0f}, {1, 4.0f / 29.0f}});
}

TEST(Stages, TopKFirstAppliesTopPToTheRenormalisedTopK) {
  SamplerConfig c = t1();
  c.top_k = 2;
  c.top_p = 0.5f;
  const auto l = probs_to_logits({0.4f, 0.3f, 0.2f, 0.1f});
  // spec: top-p over the whole distribution keeps 0.4 and 0.3 (0.4 < 0.5
  // before the second), top-k 2 keeps both.
  expect_dist(dist_of(l, c), {{0, 0.4f / 0.7f}, {1, 0.3f / 0.7f}});
  // top_k_first: the top-2 renormalised are 4/7 and 3/7; 4/7 >= 0.5 before
  // the second, so only the first survives (vLLM's and FlashInfer's order).
  c.filter_order = FilterOrder::kTopKFirst;
  expect_dist(dist_of(l, c), {{0, 1.0f}});
  // Without top-k the order is the spec's.
  c.top_k = 0;
  expect_dist(dist_of(l, c), {{0, 0.4f / 0.7f}, {1, 0.3f / 0.7f}});
  // Min-p after top-p, relative to the max: 0.3/0.4 = 0.75 >= 0.7 survives.
  c.top_k = 3;
  c.top_p = 1.0f;
  c.min_p = 0.7f;
  expect_dist(dist_of(l, c), {{0, 0.4f / 0.7f}, {1, 0.3f / 0.7f}});
}

TEST(Stages, PenaltiesKnownAnswers) {
  // Greedy over penalised logits exposes the values; compare distributions.
  const std::vector<float> l = {2.0f, -2.0f, 0.5f, 1.0f};
  PenaltyConfig p;
  p.repetition_penalty = 2.0f;  // 2 -> 1, -2 -> -4
  const auto d = dist_of(l, t1(), p, {0, 1, 0});
  const double z = std::exp(1.0) + std::exp(-4.0) + std::exp(0.5) + std::exp(1.0);
  expect_dist(d, {{0, static_cast<float>(std::exp(1.0) / z)},
                  {1, static_cast<float>(std::exp(-4.0) / z)},
                  {2, static_cast<float>(std::exp(0.5) / z)},
                  {3, static_cast<float>(std::exp(1.0) / z)}});

  PenaltyConfig q;
  q.presence_penalty = 0.5f;
  q.frequency_penalty = 0.25f;
  q.logit_bias = {{3, -1.0f}, {99, 5.0f}};  // 99 is out of vocabulary: skipped
  // id 0 seen twice: 2 - 0.5 - 0.5 = 1.0; id 3: 1 - 1 = 0.
  const auto e = dist_of(l, t1(), q, {0, 0});
  const double z2 = std::exp(1.0) + std::exp(-2.0) + std::exp(0.5) + std::exp(0.0);
  expect_dist(e, {{0, static_cast<float>(std::exp(1.0) / z2)},
                  {1, static_cast<float>(std::exp(-2.0) / z2)},
                  {2, static_cast<float>(std::exp(0.5) / z2)},
                  {3, static_cast<float>(std::exp(0.0) / z2)}});
}

TEST(Stages, PenaltyWindowOnlySeesTrailingTokens) {
  const std::vector<float> l = {2.0f, 2.0f};
  PenaltyConfig p;
  p.presence_penalty = 1.0f;
  p.window = 2;
  // id 0 is 3 tokens back: outside the window of 2.
  const auto d = dist_of(l, t1(), p, {0, 1, 1});
  const double z = std::exp(2.0) + std::exp(1.0);
  expect_dist(
      d, {{0, static_cast<float>(std::exp(2.0) / z)}, {1, static_cast<float>(std::exp(1.0) / z)}});
}

TEST(Stages, NegativeInfinityBiasBansAToken) {
  PenaltyConfig p;
  p.logit_bias = {{3, -INFINITY}};
  expect_dist(dist_of(probs_to_logits(kP), t1(), p), {{0, 1.0f / 6}, {1, 2.0f / 6}, {2, 3.0f / 6}});
}

TEST(Stages, MaskComposesWithTheFilters) {
  const auto l = probs_to_logits(kP);
  std::vector<std::uint32_t> mask(1, 0b0011u);  // only ids 0 and 1
  Workspace ws;
  SamplerConfig c = t1();
  c.top_k = 1;
  const Distribution d = sampling_distribution({LogitsView::f32(l), mask, {}}, c, {}, ws);
  ASSERT_EQ(d.ids, std::vector<std::int32_t>{1});
  EXPECT_EQ(apply_mask_argmax(LogitsView::f32(l), mask), 1);
}
