// The Llama runtime on the real SmolLM2 GGUF: a batch step equals the same
// tokens one at a time, truncation rewinds exactly, bad input is refused.
// (Parity with llama.cpp is tests/python/test_model.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "nextok/error.hpp"
#include "nextok/llama.hpp"
#include "support/smollm2.hpp"

using namespace nextok;

namespace {

std::unique_ptr<LlamaModel> load(std::uint32_t max_context = 64) {
  const auto path = nextok::testing::smollm2_gguf();
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " is missing: run scripts/fetch_smollm2.sh or set NEXTOK_SMOLLM2_GGUF";
    return nullptr;
  }
  LlamaOptions opt;
  opt.max_context = max_context;
  return LlamaModel::load(path, opt);
}

std::vector<float> rows(Model& m) {
  const LogitsView v = m.logits();
  const auto* p = static_cast<const float*>(v.data);
  return {p, p + v.rows * v.vocab};
}

}  // namespace

TEST(ModelLlama, ConfigComesFromTheGguf) {
  auto m = load();
  ASSERT_TRUE(m);
  const auto& c = m->config();
  EXPECT_EQ(c.n_layers, 30u);
  EXPECT_EQ(c.n_embd, 576u);
  EXPECT_EQ(c.n_head, 9u);
  EXPECT_EQ(c.n_head_kv, 3u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.n_vocab, 49152u);
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(m->logits_width(), 49152u);
  EXPECT_EQ(m->tokenizer().vocab().size(), 49152u);
}

TEST(ModelLlama, VerificationRowsEqualOneTokenAtATimeAndTruncateRewinds) {
  auto m = load();
  ASSERT_TRUE(m);
  const std::vector<std::int32_t> ids{1, 9690, 198, 2683, 359, 253};
  m->enqueue(ids, true);
  const auto batch = rows(*m);
  ASSERT_EQ(batch.size(), ids.size() * 49152);
  m->truncate(0);
  for (size_t i = 0; i < ids.size(); ++i) {
    m->enqueue(std::span(&ids[i], 1));
    const auto one = rows(*m);
    for (size_t k = 0; k < one.size(); ++k) {
      ASSERT_EQ(one[k], batch[i * 49152 + k]) << "position " << i << " id " << k;
    }
  }
  EXPECT_EQ(m->context_length(), ids.size());
  // Rewind to 3 and verify the rest: the rows match the first pass.
  m->truncate(3);
  m->enqueue(std::span(ids).subspan(3), true);
  const auto again = rows(*m);
  for (size_t k = 0; k < again.size(); ++k) ASSERT_EQ(again[k], batch[3 * 49152 + k]);
  // A prompt step (last row only) takes llama.cpp's batched arithmetic: close
  // to, not always equal to, the one-token rows.
  m->truncate(0);
  m->enqueue(ids);
  const auto prompt_row = rows(*m);
  float worst = 0.0f;
  for (size_t k = 0; k < prompt_row.size(); ++k) {
    worst = std::max(worst, std::abs(prompt_row[k] - batch[5 * 49152 + k]));
  }
  EXPECT_LT(worst, 2.0f);
}

TEST(ModelLlama, BadStepsAreRefused) {
  auto m = load(8);
  ASSERT_TRUE(m);
  EXPECT_THROW(m->logits(), Error);
  const std::vector<std::int32_t> bad{1, 49152};
  EXPECT_THROW(m->enqueue(bad), Error);
  const std::vector<std::int32_t> neg{-1};
  EXPECT_THROW(m->enqueue(neg), Error);
  EXPECT_EQ(m->context_length(), 0u);
  const std::vector<std::int32_t> nine(9, 5);
  try {
    m->enqueue(nine);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_THROW(m->truncate(1), Error);
  EXPECT_THROW(LlamaModel::load("/nonexistent.gguf"), Error);
}

// Continuous batching: sequences stepped together give each sequence the bits
// it gets alone, whatever the batch holds; ids are reused after removal.
TEST(ModelLlama, BatchedSequencesEqualEachSequenceAlone) {
  auto m = load();
  ASSERT_TRUE(m);
  const std::vector<std::vector<std::int32_t>> prompts = {
      {1, 504, 3458}, {28, 7, 1812, 42, 9}, {600}, {77, 78, 79, 80, 81, 82, 83}};
  const std::vector<std::int32_t> next = {17, 2000, 5, 321};
  // Alone, through the Model interface of sequence 0.
  std::vector<std::vector<float>> want;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    m->truncate(0);
    m->enqueue(prompts[i]);
    m->enqueue(std::span(&next[i], 1));
    m->enqueue(std::span(&next[(i + 1) % next.size()], 1));
    want.push_back(rows(*m));
  }
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    ids.push_back(m->add_sequence());
    m->step(ids.back(), prompts[i]);
  }
  m->step_batch(ids, next);
  std::vector<std::int32_t> second;
  for (std::size_t i = 0; i < prompts.size(); ++i) second.push_back(next[(i + 1) % next.size()]);
  // The second batch in another order, to show rows do not interact.
  std::vector<std::size_t> rev(ids.rbegin(), ids.rend());
  std::vector<std::int32_t> rev_tokens(second.rbegin(), second.rend());
  m->step_batch(rev, rev_tokens);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(m->sequence_length(ids[i]), prompts[i].size() + 2);
    const LogitsView v = m->sequence_logits(ids[i]);
    const auto* p = static_cast<const float*>(v.data);
    ASSERT_EQ(static_cast<std::size_t>(v.rows * v.vocab), want[i].size());
    EXPECT_EQ(0, std::memcmp(p, want[i].data(), want[i].size() * sizeof(float)))
        << "sequence " << i;
  }
  EXPECT_THROW(
      m->step_batch(std::vector<std::size_t>{ids[0], ids[0]}, std::vector<std::int32_t>{1, 2}),
      Error);
  EXPECT_THROW(m->step_batch(std::vector<std::size_t>{ids[0]}, std::vector<std::int32_t>{1 << 30}),
               Error);
  EXPECT_THROW(m->sequence_logits(999), Error);
  m->remove_sequence(ids[1]);
  EXPECT_THROW(m->step(ids[1], next), Error);
  EXPECT_EQ(m->add_sequence(), ids[1]);
  EXPECT_EQ(m->sequence_length(ids[1]), 0u);
  EXPECT_THROW(m->remove_sequence(0), Error);
}
