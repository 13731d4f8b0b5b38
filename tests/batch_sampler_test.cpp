// The batched host path: every row of a [B, V] batch through its own
// Sampler on a RowPool equals the same Sampler stepped alone, for mixed
// configs (greedy, stochastic, filters, penalties, masks, logprobs) and any
// thread count; a bad row fails alone; bad arguments are clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "nextok/batch_sampler.hpp"
#include "nextok/error.hpp"

using namespace nextok;

namespace {

constexpr std::int64_t kVocab = 5000;

SamplerConfig config_for(std::size_t b) {
  SamplerConfig c;
  switch (b % 5) {
    case 0:
      break;  // greedy
    case 1:
      c.temperature = 0.8f;
      break;
    case 2:
      c.temperature = 1.0f;
      c.top_p = 0.9f;
      c.top_k = 50;
      break;
    case 3:
      c.temperature = 0.7f;
      c.min_p = 0.05f;
      c.top_logprobs_k = 5;
      break;
    default:
      c.temperature = 1.2f;
      c.top_logprobs_k = 3;
      break;
  }
  c.seed = 1000 + b;
  return c;
}

PenaltyConfig penalties_for(std::size_t b) {
  PenaltyConfig p;
  if (b % 3 == 1) {
    p.repetition_penalty = 1.3f;
    p.presence_penalty = 0.5f;
  }
  if (b % 4 == 2) p.logit_bias = {{7, 5.0f}, {11, -INFINITY}};
  return p;
}

std::vector<std::unique_ptr<Sampler>> samplers(std::size_t rows) {
  std::vector<std::unique_ptr<Sampler>> s;
  for (std::size_t b = 0; b < rows; ++b)
    s.push_back(std::make_unique<Sampler>(config_for(b), penalties_for(b)));
  return s;
}

}  // namespace

TEST(BatchSampler, EveryRowEqualsItsSamplerAloneForAnyThreadCount) {
  constexpr std::size_t kRows = 37, kSteps = 6;
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<std::vector<float>> steps(kSteps, std::vector<float>(kRows * kVocab));
  for (auto& s : steps)
    for (auto& x : s) x = d(rng);
  std::vector<std::vector<std::uint32_t>> masks(kRows,
                                                std::vector<std::uint32_t>((kVocab + 31) / 32));
  for (std::size_t b = 0; b < kRows; ++b)
    for (auto& w : masks[b]) w = b % 2 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(rng());
  std::vector<std::span<const std::uint32_t>> mask_spans(masks.begin(), masks.end());

  // Alone: each row's sampler stepped by itself.
  auto alone = samplers(kRows);
  std::vector<std::vector<StepResult>> want(kSteps);
  for (std::size_t s = 0; s < kSteps; ++s) {
    for (std::size_t b = 0; b < kRows; ++b) {
      const LogitsView row = LogitsView::f32(
          std::span<const float>(steps[s].data() + b * kVocab, static_cast<std::size_t>(kVocab)));
      want[s].push_back(alone[b]->next(row, mask_spans[b]));
    }
  }
  for (unsigned threads : {1u, 2u, 5u}) {
    RowPool pool(threads);
    auto batch = samplers(kRows);
    std::vector<Sampler*> ptrs;
    for (auto& p : batch) ptrs.push_back(p.get());
    for (std::size_t s = 0; s < kSteps; ++s) {
      const LogitsView all{steps[s].data(), DType::kF32, static_cast<std::int64_t>(kRows), kVocab,
                           Device::kCPU};
      const std::vector<BatchStep> got = sample_batch(pool, all, ptrs, mask_spans);
      ASSERT_EQ(got.size(), kRows);
      for (std::size_t b = 0; b < kRows; ++b) {
        ASSERT_FALSE(got[b].error) << "row " << b;
        EXPECT_EQ(got[b].step.token, want[s][b].token)
            << "threads " << threads << " step " << s << " row " << b;
        ASSERT_EQ(got[b].step.logprobs.has_value(), want[s][b].logprobs.has_value());
        if (got[b].step.logprobs) {
          EXPECT_EQ(got[b].step.logprobs->token_logprob, want[s][b].logprobs->token_logprob);
          ASSERT_EQ(got[b].step.logprobs->top.size(), want[s][b].logprobs->top.size());
          for (std::size_t k = 0; k < got[b].step.logprobs->top.size(); ++k)
            EXPECT_EQ(got[b].step.logprobs->top[k].token_id, want[s][b].logprobs->top[k].token_id);
        }
      }
    }
  }
}

// Callers on several threads share one pool: their runs take turns and
// each gets its own rows' results.
TEST(BatchSampler, ConcurrentCallersShareOnePool) {
  RowPool pool(3);
  std::vector<std::thread> callers;
  std::vector<int> wrong(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int rep = 0; rep < 50; ++rep) {
        std::vector<std::size_t> seen(16, 0);
        pool.run(
            16, [&](std::size_t b, Workspace&) { seen[b] = b * 10 + static_cast<std::size_t>(c); });
        for (std::size_t b = 0; b < 16; ++b)
          wrong[c] += seen[b] != b * 10 + static_cast<std::size_t>(c);
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < 4; ++c) EXPECT_EQ(wrong[c], 0) << "caller " << c;
}

TEST(BatchSampler, ABadRowFailsAloneAndBadArgumentsAreClear) {
  std::vector<float> logits(3 * kVocab, 0.5f);
  logits[kVocab + 17] = NAN;  // row 1
  logits[2 * kVocab + 3] = 9.0f;
  RowPool pool(2);
  auto s = samplers(3);
  std::vector<Sampler*> ptrs{s[0].get(), s[1].get(), s[2].get()};
  const LogitsView all{logits.data(), DType::kF32, 3, kVocab, Device::kCPU};
  const auto got = sample_batch(pool, all, ptrs);
  EXPECT_FALSE(got[0].error);
  ASSERT_TRUE(got[1].error);
  EXPECT_THROW(std::rethrow_exception(got[1].error), Error);
  EXPECT_FALSE(got[2].error);
  EXPECT_EQ(got[0].step.token, 0);  // all equal: the lowest index
  std::vector<Sampler*> two{s[0].get(), s[2].get()};
  EXPECT_THROW(sample_batch(pool, all, two), Error);
  std::vector<Sampler*> with_null{s[0].get(), nullptr, s[2].get()};
  EXPECT_THROW(sample_batch(pool, all, with_null), Error);
  // Without error slots, run() rethrows the first failing row's error.
  EXPECT_THROW(pool.run(4,
                        [](std::size_t b, Workspace&) {
                          if (b == 2) throw Error(ErrorCode::kInvalidArgument, "x", "row 2");
                        }),
               Error);
}
