// Bad input gets a typed error, never UB.
#include <gtest/gtest.h>

#include "nextok/cuda.hpp"
#include "test_util.hpp"

using namespace nextok;

namespace {

template <typename F>
void expect_code(F&& f, ErrorCode code, const char* param = nullptr) {
  try {
    f();
    FAIL() << "expected " << error_code_name(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    if (param != nullptr) {
      EXPECT_EQ(e.param(), param) << e.what();
    }
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

SamplerConfig sampling() {
  SamplerConfig c;
  c.temperature = 1.0f;
  return c;
}

}  // namespace

TEST(BadInput, ConfigValidationNamesTheParameter) {
  auto bad_sampler = [](auto mutate, const char* param) {
    SamplerConfig c = sampling();
    mutate(c);
    expect_code([&] { c.validate(); }, ErrorCode::kInvalidArgument, param);
  };
  bad_sampler([](SamplerConfig& c) { c.temperature = -0.1f; }, "temperature");
  bad_sampler([](SamplerConfig& c) { c.temperature = NAN; }, "temperature");
  bad_sampler([](SamplerConfig& c) { c.temperature = INFINITY; }, "temperature");
  bad_sampler([](SamplerConfig& c) { c.top_p = -0.1f; }, "top_p");
  bad_sampler([](SamplerConfig& c) { c.top_p = -0.0f - 1e-30f; }, "top_p");
  bad_sampler([](SamplerConfig& c) { c.top_p = NAN; }, "top_p");
  bad_sampler([](SamplerConfig& c) { c.top_p = INFINITY; }, "top_p");
  bad_sampler([](SamplerConfig& c) { c.top_k = -1; }, "top_k");
  bad_sampler([](SamplerConfig& c) { c.min_p = -0.1f; }, "min_p");
  bad_sampler([](SamplerConfig& c) { c.min_p = NAN; }, "min_p");
  bad_sampler([](SamplerConfig& c) { c.top_logprobs_k = 21; }, "top_logprobs");

  auto bad_pen = [](auto mutate, const char* param) {
    PenaltyConfig p;
    mutate(p);
    expect_code([&] { p.validate(); }, ErrorCode::kInvalidArgument, param);
  };
  bad_pen([](PenaltyConfig& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty");
  bad_pen([](PenaltyConfig& p) { p.repetition_penalty = NAN; }, "repetition_penalty");
  bad_pen([](PenaltyConfig& p) { p.presence_penalty = INFINITY; }, "presence_penalty");
  bad_pen([](PenaltyConfig& p) { p.frequency_penalty = NAN; }, "frequency_penalty");
  bad_pen([](PenaltyConfig& p) { p.logit_bias = {{1, NAN}}; }, "logit_bias");
  bad_pen([](PenaltyConfig& p) { p.logit_bias = {{1, INFINITY}}; }, "logit_bias");

  SamplerConfig ok = sampling();
  ok.top_p = 1.0f;
  ok.min_p = 1.0f;
  ok.top_logprobs_k = 20;
  EXPECT_NO_THROW(ok.validate());
  // top_p 0 (mlx-lm's default), -0 and anything >= 1 are "off", not errors.
  for (float p : {0.0f, -0.0f, 1.5f, 1e30f}) {
    ok.top_p = p;
    EXPECT_NO_THROW(ok.validate()) << p;
  }
  EXPECT_THROW(parse_filter_order("mlx"), Error);
  EXPECT_EQ(parse_filter_order("mlx_lm"), FilterOrder::kMlxLm);
  EXPECT_EQ(parse_filter_order("top_k_first"), FilterOrder::kTopKFirst);
  EXPECT_THROW(parse_filter_order("vllm"), Error);
  for (FilterOrder o : {FilterOrder::kSpec, FilterOrder::kMlxLm, FilterOrder::kTopKFirst})
    EXPECT_EQ(parse_filter_order(filter_order_name(o)), o);
}

TEST(BadInput, CudaRowParamsTakeSpecAndTopKFirstOnly) {
  SamplerConfig c = sampling();
  c.top_k = 7;
  c.filter_order = FilterOrder::kTopKFirst;
  const cuda::RowParams r = cuda::RowParams::from(c, {});
  EXPECT_EQ(r.filter_order, FilterOrder::kTopKFirst);
  EXPECT_EQ(r.top_k, 7);
  EXPECT_EQ(cuda::RowParams::from(sampling(), {}).filter_order, FilterOrder::kSpec);
  c.filter_order = FilterOrder::kMlxLm;
  expect_code([&] { (void)cuda::RowParams::from(c, {}); }, ErrorCode::kUnsupported, "filter_order");
  // The kernels divide by any temperature > 0: the greedy range goes as 0.
  c = sampling();
  c.temperature = 1e-40f;
  c.top_p = 0.0f;  // off, passed through (the kernels test 0 < top_p < 1)
  EXPECT_EQ(cuda::RowParams::from(c, {}).temperature, 0.0f);
  EXPECT_EQ(cuda::RowParams::from(c, {}).top_p, 0.0f);
  c.temperature = 0.7f;
  EXPECT_EQ(cuda::RowParams::from(c, {}).temperature, 0.7f);
}

TEST(BadInput, NanLogitsAreAnErrorOnEveryPath) {
  std::vector<float> l(100, 0.5f);
  l[42] = NAN;
  const LogitsView v = LogitsView::f32(l);
  Workspace ws;
  Pcg32 rng(1, 1);
  expect_code([&] { argmax(v); }, ErrorCode::kNanLogits);
  expect_code([&] { apply_mask_argmax(v, test::full_mask(100)); }, ErrorCode::kNanLogits);
  expect_code([&] { argmax_with_penalties({v, {}, {}}, {}, ws); }, ErrorCode::kNanLogits);
  expect_code([&] { sample_token({v, {}, {}}, sampling(), {}, rng, ws); }, ErrorCode::kNanLogits);
  expect_code(
      [&] {
        sampling_distribution({v, {}, {}}, sampling(), {}, ws);
      },
      ErrorCode::kNanLogits);
  expect_code([&] { compute_top_logprobs(v, 0, 3); }, ErrorCode::kNanLogits);
  // A NaN hidden behind the mask is still an error: the model step is broken.
  std::vector<std::uint32_t> mask = test::full_mask(100);
  bitmask_set(mask, 42, false);
  expect_code([&] { sample_token({v, mask, {}}, sampling(), {}, rng, ws); }, ErrorCode::kNanLogits);
}

TEST(BadInput, InfiniteLogits) {
  std::vector<float> l(10, 0.0f);
  l[3] = INFINITY;
  Workspace ws;
  Pcg32 rng(1, 1);
  // Greedy: +inf is simply the largest value.
  EXPECT_EQ(argmax(LogitsView::f32(l)), 3);
  // Stochastic: no distribution exists.
  expect_code(
      [&] {
        sample_token({LogitsView::f32(l), {}, {}}, sampling(), {}, rng, ws);
      },
      ErrorCode::kNonFiniteLogits);
  // -inf logits are legitimate bans.
  std::vector<float> m(10, -INFINITY);
  m[7] = 1.0f;
  const Distribution d = sampling_distribution({LogitsView::f32(m), {}, {}}, sampling(), {}, ws);
  EXPECT_EQ(d.ids, std::vector<std::int32_t>{7});
}

TEST(BadInput, FullyMaskedVocabulary) {
  std::vector<float> l(70, 1.0f);
  std::vector<std::uint32_t> none(bitmask_words(70), 0u);
  Workspace ws;
  Pcg32 rng(1, 1);
  expect_code([&] { apply_mask_argmax(LogitsView::f32(l), none); }, ErrorCode::kNoViableToken);
  expect_code(
      [&] {
        sample_token({LogitsView::f32(l), none, {}}, sampling(), {}, rng, ws);
      },
      ErrorCode::kNoViableToken);
  std::vector<float> all_neg(70, -INFINITY);
  expect_code([&] { argmax(LogitsView::f32(all_neg)); }, ErrorCode::kNoViableToken);
  PenaltyConfig ban;
  for (int i = 0; i < 70; ++i) ban.logit_bias.emplace_back(i, -INFINITY);
  expect_code(
      [&] {
        sample_token({LogitsView::f32(l), {}, {}}, sampling(), ban, rng, ws);
      },
      ErrorCode::kNoViableToken);
}

TEST(BadInput, MaskLengthMustMatchVocab) {
  std::vector<float> l(70, 1.0f);
  std::vector<std::uint32_t> short_mask(2, ~0u), long_mask(4, ~0u);
  Workspace ws;
  Pcg32 rng(1, 1);
  expect_code([&] { apply_mask_argmax(LogitsView::f32(l), short_mask); },
              ErrorCode::kMaskSizeMismatch, "mask");
  expect_code(
      [&] {
        sample_token({LogitsView::f32(l), long_mask, {}}, sampling(), {}, rng, ws);
      },
      ErrorCode::kMaskSizeMismatch, "mask");
  // Bits past V in the last word are ignored.
  std::vector<std::uint32_t> m(3, 0u);
  m[2] = 0xFFFFFFC0u;  // ids 70.. (out of range) plus nothing valid
  bitmask_set(m, 69, true);
  EXPECT_EQ(apply_mask_argmax(LogitsView::f32(l), m), 69);
}

TEST(BadInput, ShapesAndHistory) {
  std::vector<float> l(20, 1.0f);
  Workspace ws;
  Pcg32 rng(1, 1);
  expect_code([&] { argmax(LogitsView::f32_rows(l.data(), 2, 10)); }, ErrorCode::kShapeMismatch);
  expect_code([&] { LogitsView::f32_rows(l.data(), 2, 10).row(2); }, ErrorCode::kShapeMismatch);
  expect_code([&] { argmax(LogitsView::f32({})); }, ErrorCode::kShapeMismatch);
  LogitsView cuda = LogitsView::f32(l);
  cuda.device = Device::kCUDA;
  expect_code([&] { argmax(cuda); }, ErrorCode::kUnsupported);
  PenaltyConfig p;
  p.presence_penalty = 1.0f;
  const std::vector<std::int32_t> hist = {3, 25};
  expect_code(
      [&] {
        sample_token({LogitsView::f32(l), {}, hist}, sampling(), p, rng, ws);
      },
      ErrorCode::kInvalidArgument, "history");
  expect_code([&] { compute_top_logprobs(LogitsView::f32(l), 20, 1); },
              ErrorCode::kInvalidArgument);
  expect_code([&] { compute_top_logprobs(LogitsView::f32(l), 0, 21); },
              ErrorCode::kInvalidArgument);
}

TEST(BadInput, BatchedArgmax) {
  std::vector<float> l = {0, 5, 1, 9, 2, 2};
  std::vector<std::int32_t> out(2);
  argmax_rows(LogitsView::f32_rows(l.data(), 2, 3), out);
  EXPECT_EQ(out, (std::vector<std::int32_t>{1, 0}));
  std::vector<std::int32_t> wrong(3);
  expect_code([&] { argmax_rows(LogitsView::f32_rows(l.data(), 2, 3), wrong); },
              ErrorCode::kShapeMismatch);
}
