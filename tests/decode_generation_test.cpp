// The step-driven Generation: stepped by hand it equals generate() token for
// token (host sampling, speculation, stop strings, logprobs), generations
// stepped in lockstep do not affect each other, and misuse is an error.
#include <gtest/gtest.h>

#include "support/decode_fixture.hpp"

using namespace nextok;
using namespace nextok::testing;

namespace {

// What a batching server does per generation: truncate, enqueue, feed.
GenerateResult step_by_hand(ScriptedModel& model, Generation& g) {
  const std::size_t base = model.context_length();
  while (!g.done()) {
    const Generation::Call& call = g.next_call();
    if (model.context_length() > base + call.keep) model.truncate(base + call.keep);
    model.enqueue(call.tokens, call.all_logits);
    g.feed(model.logits());
  }
  return g.take_result();
}

void expect_same(const GenerateResult& a, const GenerateResult& b, const char* what) {
  EXPECT_EQ(a.tokens, b.tokens) << what;
  EXPECT_EQ(a.content, b.content) << what;
  EXPECT_EQ(a.reasoning, b.reasoning) << what;
  EXPECT_EQ(a.finish, b.finish) << what;
  EXPECT_EQ(a.stop_string, b.stop_string) << what;
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size()) << what;
  for (std::size_t i = 0; i < a.logprobs.size(); ++i) {
    ASSERT_EQ(a.logprobs[i].has_value(), b.logprobs[i].has_value()) << what;
    if (a.logprobs[i]) {
      EXPECT_EQ(a.logprobs[i]->token_logprob, b.logprobs[i]->token_logprob) << what;
    }
  }
}

std::vector<std::int32_t> repetitive_script() {
  std::vector<std::int32_t> s;
  for (int i = 0; i < 5; ++i) append(s, encode(" one two three four, five"));
  return s;
}

}  // namespace

TEST(Generation, SteppedByHandEqualsGenerate) {
  NgramDrafter ngram(3, 1);
  struct Case {
    const char* name;
    GenerateOptions opt;
  };
  std::vector<Case> cases(4);
  cases[0].name = "greedy";
  cases[1].name = "sampled with logprobs";
  cases[1].opt.sampler.temperature = 0.9f;
  cases[1].opt.sampler.top_p = 0.95f;
  cases[1].opt.sampler.seed = 11;
  cases[1].opt.sampler.top_logprobs_k = 3;
  cases[2].name = "stop string";
  cases[2].opt.stop = {" four"};
  cases[3].name = "greedy speculation";
  cases[3].opt.speculative.drafter = &ngram;
  cases[3].opt.speculative.max_draft = 4;
  for (auto& c : cases) {
    c.opt.max_tokens = 60;
    ScriptedModelOptions mo;
    mo.script = repetitive_script();
    ScriptedModel a(mo), b(mo);
    const GenerateResult want = generate(a, qwen3().vocab(), default_prompt(), c.opt);
    Generation g(qwen3().vocab(), b.logits_width(), default_prompt(), c.opt);
    expect_same(step_by_hand(b, g), want, c.name);
    EXPECT_EQ(b.context(), a.context()) << c.name;
  }
}

TEST(Generation, LockstepGenerationsAreIndependent) {
  GenerateOptions opt;
  opt.max_tokens = 40;
  opt.sampler.temperature = 1.0f;
  std::vector<GenerateResult> alone;
  std::vector<std::unique_ptr<ScriptedModel>> models;
  std::vector<Generation> gens;
  for (std::uint64_t s = 0; s < 3; ++s) {
    opt.sampler.seed = 100 + s;
    ScriptedModelOptions mo;
    mo.seed = s + 1;
    ScriptedModel solo(mo);
    alone.push_back(generate(solo, qwen3().vocab(), default_prompt(), opt));
    models.push_back(std::make_unique<ScriptedModel>(mo));
    gens.emplace_back(qwen3().vocab(), models.back()->logits_width(), default_prompt(), opt);
  }
  // One call per live generation per round, as a scheduler loop does.
  for (bool live = true; live;) {
    live = false;
    for (std::size_t k = 0; k < gens.size(); ++k) {
      if (gens[k].done()) continue;
      live = true;
      const auto& call = gens[k].next_call();
      models[k]->enqueue(call.tokens, call.all_logits);
      gens[k].feed(models[k]->logits());
    }
  }
  for (std::size_t k = 0; k < gens.size(); ++k) {
    expect_same(gens[k].take_result(), alone[k], "lockstep");
  }
}

TEST(Generation, CancelEndsItAndMisuseIsAnError) {
  GenerateOptions opt;
  opt.max_tokens = 50;
  ScriptedModel model(ScriptedModelOptions{});
  Generation g(qwen3().vocab(), model.logits_width(), default_prompt(), opt);
  for (int i = 0; i < 5; ++i) {
    const auto& call = g.next_call();
    model.enqueue(call.tokens, call.all_logits);
    g.feed(model.logits());
  }
  g.cancel();
  EXPECT_TRUE(g.done());
  EXPECT_EQ(g.result().finish, FinishReason::kCancelled);
  EXPECT_EQ(g.result().tokens.size(), 5u);
  EXPECT_THROW(g.next_call(), Error);
  EXPECT_THROW(g.feed(model.logits()), Error);
  EXPECT_THROW(Generation(qwen3().vocab(), model.logits_width(), {}, opt), Error);
  EXPECT_THROW(Generation(qwen3().vocab(), 1000, default_prompt(), opt), Error);
}
