// Property tests on random cases: the fast pipeline equals the full-sort
// reference exactly, in every filter order, for f32 and bf16, with masks,
// penalties and ties; plus invariants every distribution must satisfy.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "backend/cpu/bf16.hpp"
#include "reference/full_sort.hpp"
#include "test_util.hpp"

using namespace nextok;

namespace {

struct Case {
  std::vector<float> logits;
  std::vector<std::uint16_t> bf16;
  std::vector<std::uint32_t> mask;
  std::vector<std::int32_t> history;
  SamplerConfig cfg;
  PenaltyConfig pen;
  bool use_bf16 = false;
  StepInput input() const {
    return {use_bf16 ? LogitsView::bf16(bf16) : LogitsView::f32(logits), mask, history};
  }
};

Case random_case(std::mt19937_64& g, std::size_t v) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Case c;
  const float shape = u(g);
  c.logits = test::random_logits(g, v, u(g) < 0.4f);
  if (shape < 0.15f) {  // flat: huge nucleus, exercises the fallback path
    for (float& x : c.logits) x *= 0.01f;
  } else if (shape < 0.5f) {  // peaked head like a real model
    for (int j = 0; j < 16; ++j) c.logits[g() % v] = 15.0f - static_cast<float>(j) * 0.7f;
  }
  c.use_bf16 = u(g) < 0.3f;
  c.bf16.resize(v);
  for (std::size_t i = 0; i < v; ++i) c.bf16[i] = cpu::f32_to_bf16(c.logits[i]);
  if (u(g) < 0.3f) {
    c.mask.assign(bitmask_words(v), 0);
    for (std::size_t i = 0; i < v; ++i)
      if (u(g) < 0.6f) bitmask_set(c.mask, i, true);
    bitmask_set(c.mask, g() % v, true);
  }
  c.cfg.temperature = std::array<float, 5>{0.3f, 0.7f, 1.0f, 1.0f, 1.8f}[g() % 5];
  if (u(g) < 0.6f) c.cfg.top_p = std::array<float, 5>{0.1f, 0.5f, 0.9f, 0.95f, 0.999f}[g() % 5];
  if (u(g) < 0.5f) c.cfg.top_k = static_cast<std::int32_t>(1 + g() % std::min<std::size_t>(v, 300));
  if (u(g) < 0.4f) c.cfg.min_p = std::array<float, 4>{0.01f, 0.05f, 0.2f, 1.0f}[g() % 4];
  const float order = u(g);
  c.cfg.filter_order = order < 0.4f   ? FilterOrder::kSpec
                       : order < 0.7f ? FilterOrder::kMlxLm
                                      : FilterOrder::kTopKFirst;
  if (u(g) < 0.5f) {
    c.pen.repetition_penalty = 1.0f + u(g);
    c.pen.presence_penalty = u(g);
    c.pen.frequency_penalty = u(g) * 0.5f;
    for (int i = 0; i < 30; ++i)
      c.history.push_back(static_cast<std::int32_t>(g() % std::min<std::size_t>(v, 40)));
    for (int i = 0; i < 4; ++i)
      c.pen.logit_bias.emplace_back(static_cast<std::int32_t>(g() % (v + 5)), u(g) * 4 - 2);
  }
  return c;
}

}  // namespace

class PipelineProperty : public ::testing::TestWithParam<std::size_t> {};

TEST_P(PipelineProperty, FastEqualsFullSortAndInvariantsHold) {
  const std::size_t v = GetParam();
  std::mt19937_64 g(1000 + v);
  const int cases = v >= 100000 ? 12 : (v >= 10000 ? 120 : 400);
  Workspace ws, ws_ref;
  for (int n = 0; n < cases; ++n) {
    const Case c = random_case(g, v);
    const StepInput in = c.input();
    const Distribution fast = sampling_distribution(in, c.cfg, c.pen, ws);
    const Distribution ref = reference::full_sort_distribution(in, c.cfg, c.pen, ws_ref);
    ASSERT_EQ(fast.ids, ref.ids) << "case " << n << " V=" << v
                                 << " order=" << filter_order_name(c.cfg.filter_order)
                                 << " T=" << c.cfg.temperature << " top_p=" << c.cfg.top_p
                                 << " top_k=" << c.cfg.top_k << " min_p=" << c.cfg.min_p
                                 << " bf16=" << c.use_bf16 << " |fast|=" << fast.ids.size()
                                 << " |ref|=" << ref.ids.size();
    ASSERT_EQ(fast.probs, ref.probs) << "case " << n;

    const double sum = std::accumulate(fast.probs.begin(), fast.probs.end(), 0.0);
    EXPECT_NEAR(sum, 1.0, 1e-5);
    ASSERT_TRUE(std::is_sorted(fast.ids.begin(), fast.ids.end()));
    if (c.cfg.top_k > 0) {
      EXPECT_LE(fast.ids.size(), static_cast<std::size_t>(c.cfg.top_k));
    }
    for (std::int32_t id : fast.ids) {
      if (!c.mask.empty()) {
        ASSERT_TRUE(bitmask_allows(c.mask, static_cast<std::size_t>(id)));
      }
    }
    ASSERT_FALSE(fast.ids.empty());

    // Same seed, same token; the token is in the support; it matches the reference draw.
    Pcg32 r1 = Pcg32::for_seed(n), r2 = Pcg32::for_seed(n), r3 = Pcg32::for_seed(n);
    const std::int32_t t1 = sample_token(in, c.cfg, c.pen, r1, ws);
    EXPECT_EQ(t1, sample_token(in, c.cfg, c.pen, r2, ws));
    EXPECT_TRUE(std::binary_search(fast.ids.begin(), fast.ids.end(), t1));
    const bool filtered = (c.cfg.top_p > 0 && c.cfg.top_p < 1) || c.cfg.min_p > 0 ||
                          (c.cfg.top_k > 0 && static_cast<std::size_t>(c.cfg.top_k) < v);
    if (filtered) {
      EXPECT_EQ(t1, reference::full_sort_sample(in, c.cfg, c.pen, r3, ws_ref));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Vocab, PipelineProperty,
                         ::testing::Values(17, 111, 1000, 4096, 32000, 151936));

TEST(Pipeline, TemperatureZeroIsGreedyOverProcessedLogits) {
  std::mt19937_64 g(5);
  Workspace ws;
  for (int n = 0; n < 200; ++n) {
    auto l = test::random_logits(g, 300, true);
    PenaltyConfig p;
    p.repetition_penalty = 1.5f;
    const std::vector<std::int32_t> hist = {1, 2, 3};
    SamplerConfig c;
    Pcg32 rng = Pcg32::for_seed(1);
    const StepInput in{LogitsView::f32(l), {}, hist};
    EXPECT_EQ(sample_token(in, c, p, rng, ws), argmax_with_penalties(in, p, ws));
    EXPECT_EQ(sample_token({LogitsView::f32(l), {}, {}}, c, {}, rng, ws),
              argmax(LogitsView::f32(l)));
  }
}

TEST(Pipeline, TemperatureBelowTheGreedyThresholdIsGreedy) {
  // 1/T overflows float below ~3e-39; below kGreedyTemperature (vLLM's
  // 1e-5) the step is the argmax, in every order, whatever the filters.
  std::mt19937_64 g(9);
  Workspace ws;
  for (FilterOrder order : {FilterOrder::kSpec, FilterOrder::kMlxLm, FilterOrder::kTopKFirst}) {
    for (float t : {1e-45f, 1e-40f, 1e-30f, 1e-6f, std::nextafter(kGreedyTemperature, 0.0f)}) {
      auto l = test::random_logits(g, 1000, false);
      SamplerConfig c;
      c.temperature = t;
      c.top_p = 0.9f;
      c.top_k = 50;
      c.filter_order = order;
      ASSERT_NO_THROW(c.validate());
      EXPECT_FALSE(c.sampling_active());
      PenaltyConfig p;
      p.presence_penalty = 0.5f;
      const std::vector<std::int32_t> hist = {1, 2, 3};
      const StepInput in{LogitsView::f32(l), {}, hist};
      Pcg32 rng = Pcg32::for_seed(1);
      const std::int32_t want = argmax_with_penalties(in, p, ws);
      EXPECT_EQ(sample_token(in, c, p, rng, ws), want) << t;
      const Distribution d = sampling_distribution(in, c, p, ws);
      EXPECT_EQ(d.ids, std::vector<std::int32_t>{want}) << t;
      Sampler s(c, p);
      EXPECT_EQ(s.next(LogitsView::f32(l)).token,
                argmax_with_penalties({in.logits, {}, {}}, p, ws));
    }
  }
  SamplerConfig c;
  c.temperature = kGreedyTemperature;  // the threshold itself samples
  EXPECT_TRUE(c.sampling_active());
}

TEST(Pipeline, SamplerPicksTheSamePathsAsTheFreeFunctions) {
  std::mt19937_64 g(6);
  auto l = test::random_logits(g, 1000, false);
  SamplerConfig c;
  c.temperature = 0.8f;
  c.top_k = 20;
  c.seed = 77;
  c.top_logprobs_k = 5;
  PenaltyConfig p;
  p.presence_penalty = 0.7f;
  Sampler s(c, p);
  Workspace ws;
  Pcg32 rng = Pcg32::for_seed(77);
  std::vector<std::int32_t> hist;
  for (int step = 0; step < 50; ++step) {
    const StepResult r = s.next(LogitsView::f32(l));
    const std::int32_t want = sample_token({LogitsView::f32(l), {}, hist}, c, p, rng, ws);
    ASSERT_EQ(r.token, want) << step;
    ASSERT_TRUE(r.logprobs.has_value());
    EXPECT_EQ(r.logprobs->top.size(), 5u);
    hist.push_back(want);
    if (hist.size() > p.window) hist.erase(hist.begin());
  }
}
