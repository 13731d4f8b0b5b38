// The server's StepLoop on the real SmolLM2 GGUF: requests stepped together
// (batched single-token steps, long prompts read in chunks, speculation
// beside sampling) give exactly what each gives alone through generate();
// cancellation ends a request within a step; a full queue is a 503.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "nextok/llama.hpp"
#include "server/step_loop.hpp"
#include "support/smollm2.hpp"

namespace nextok::server {
namespace {

std::unique_ptr<LlamaModel> load() {
  const auto path = nextok::testing::smollm2_gguf();
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run scripts/fetch_smollm2.sh";
    return nullptr;
  }
  LlamaOptions opt;
  opt.max_context = 256;
  return LlamaModel::load(path, opt);
}

std::shared_ptr<Job> job(std::vector<std::int32_t> prompt, std::uint32_t max_tokens,
                         float temperature, std::uint64_t seed) {
  auto j = std::make_shared<Job>();
  j->prompt = std::move(prompt);
  j->options.max_tokens = max_tokens;
  j->options.sampler.temperature = temperature;
  j->options.sampler.seed = seed;
  return j;
}

std::vector<std::int32_t> ramp(std::size_t n, std::int32_t from) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<std::int32_t>(i * 7 % 900);
  return v;
}

}  // namespace

TEST(StepLoop, StepsTogetherEqualEachAlone) {
  auto model = load();
  ASSERT_TRUE(model);
  std::vector<std::shared_ptr<Job>> jobs = {
      job(ramp(5, 100), 8, 0.0f, 0), job(ramp(70, 300), 6, 0.8f, 7),  // 70 tokens: 5 chunks
      job(ramp(3, 50), 10, 1.0f, 3), job(ramp(9, 700), 6, 0.0f, 0), job(ramp(40, 20), 6, 0.7f, 11)};
  NgramDrafter drafter;
  jobs[3]->options.speculative.drafter = &drafter;  // greedy verification beside sampling
  jobs[3]->options.speculative.max_draft = 3;
  std::vector<GenerateResult> alone;
  for (const auto& j : jobs) {
    model->truncate(0);
    alone.push_back(generate(*model, model->tokenizer().vocab(), j->prompt, j->options));
  }
  LoopStats stats;
  {
    StepLoop loop(*model, 3, 16, /*prefill_chunk=*/16);
    for (const auto& j : jobs) loop.submit(j);
    for (const auto& j : jobs) j->wait_done();
    stats = loop.stats();
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_FALSE(jobs[i]->error) << i << ": " << jobs[i]->error->what();
    EXPECT_EQ(jobs[i]->result.tokens, alone[i].tokens) << "job " << i;
    EXPECT_EQ(jobs[i]->result.content, alone[i].content) << "job " << i;
    EXPECT_EQ(jobs[i]->result.finish, alone[i].finish) << "job " << i;
  }
  EXPECT_EQ(stats.served, jobs.size());
  EXPECT_GE(stats.batching.largest, 2u) << "single-token steps shared a batch";
  EXPECT_GE(stats.batching.prefill_chunks, 4u + 2u) << "70 and 40 tokens in chunks of 16";
}

TEST(StepLoop, CancelEndsWithinAStepAndAFullQueueIs503) {
  auto model = load();
  ASSERT_TRUE(model);
  StepLoop loop(*model, 1, 1);
  auto running = job(ramp(4, 10), 200, 1.0f, 1);
  // Ends only on the last id (practically never), so it runs until cancelled.
  running->options.eos_ids = {static_cast<std::uint32_t>(model->tokenizer().vocab().size() - 1)};
  running->stream = true;
  auto waiting = job(ramp(4, 10), 2, 0.0f, 0);
  loop.submit(running);
  JobEvent ev;
  ASSERT_EQ(running->next(ev, std::chrono::milliseconds(60000)), Job::Wait::kEvent);
  loop.submit(waiting);
  try {
    loop.submit(job(ramp(4, 10), 2, 0.0f, 0));
    ADD_FAILURE() << "a third request fits a queue of one";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
  }
  const auto t0 = std::chrono::steady_clock::now();
  running->cancel();
  running->wait_done();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(running->result.finish, FinishReason::kCancelled);
  EXPECT_LT(running->result.tokens.size(), 200u);
  waiting->wait_done();
  EXPECT_FALSE(waiting->error);
  EXPECT_EQ(waiting->result.tokens.size(), 2u);
}

// Admission by cost: long prompts (past one chunk) hold at most slots - 1
// slots, so a short request behind two long ones takes the last slot at
// once instead of waiting for a whole long generation.
TEST(StepLoop, ShortRequestsPassLongPromptsThatWouldFillEverySlot) {
  auto model = load();
  ASSERT_TRUE(model);
  StepLoop loop(*model, 2, 8, /*prefill_chunk=*/16);
  const auto never = static_cast<std::uint32_t>(model->tokenizer().vocab().size() - 1);
  auto long_a = job(ramp(40, 10), 200, 1.0f, 1), long_b = job(ramp(40, 20), 200, 1.0f, 2);
  long_a->options.eos_ids = {never};
  long_b->options.eos_ids = {never};
  auto short_c = job(ramp(4, 30), 2, 0.0f, 0);
  loop.submit(long_a);
  loop.submit(long_b);
  loop.submit(short_c);
  short_c->wait_done();
  EXPECT_FALSE(short_c->error);
  EXPECT_EQ(short_c->result.tokens.size(), 2u);
  const LoopStats s = loop.stats();
  EXPECT_EQ(s.queued, 1u) << "the second long prompt waits while the short one runs";
  long_a->cancel();
  long_b->cancel();
  long_a->wait_done();
  long_b->wait_done();
}

// Long prompts' chunks yield to a new short request's first two calls (its
// prompt and the step whose token it streams first), so its first token
// does not wait for two chunks; the long prompts read on afterwards and
// give what they give alone.
TEST(StepLoop, LongPromptChunksYieldToANewShortRequest) {
  auto model = load();
  ASSERT_TRUE(model);
  auto long_a = job(ramp(64, 10), 2, 0.0f, 0), long_b = job(ramp(64, 20), 2, 0.0f, 0);
  auto short_c = job(ramp(4, 30), 2, 0.0f, 0);
  std::vector<GenerateResult> alone;
  for (const auto& j : {long_a, long_b}) {
    model->truncate(0);
    alone.push_back(generate(*model, model->tokenizer().vocab(), j->prompt, j->options));
  }
  LoopStats s;
  {
    StepLoop loop(*model, 3, 8, /*prefill_chunk=*/16);
    loop.submit(long_a);
    loop.submit(long_b);
    while (loop.stats().batching.prefill_chunks == 0) std::this_thread::yield();
    loop.submit(short_c);
    short_c->wait_done();
    s = loop.stats();
    long_a->wait_done();
    long_b->wait_done();
  }
  EXPECT_FALSE(short_c->error);
  EXPECT_EQ(short_c->result.tokens.size(), 2u);
  EXPECT_EQ(s.batching.prefill_yields, 2u) << "the short request's prompt and first decode step";
  EXPECT_LT(s.batching.prefill_chunks, 6u) << "two 64-token prompts (3 chunks each) still read";
  const std::vector<std::shared_ptr<Job>> longs = {long_a, long_b};
  for (std::size_t i = 0; i < longs.size(); ++i) {
    ASSERT_FALSE(longs[i]->error);
    EXPECT_EQ(longs[i]->result.tokens, alone[i].tokens) << "long " << i;
  }
}

}  // namespace nextok::server
