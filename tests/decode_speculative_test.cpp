// Speculative decoding: greedy verification reproduces plain greedy output
// for any drafter; stochastic acceptance keeps the target distribution (χ²).
#include <gtest/gtest.h>

#include <random>

#include "support/decode_fixture.hpp"
#include "test_util.hpp"

using namespace nextok;
using namespace nextok::testing;

namespace {

// Proposes a fixed future (what plain greedy will produce), so every draft is
// accepted until the future runs out.
class OracleDrafter final : public Drafter {
 public:
  OracleDrafter(std::vector<std::int32_t> full) : full_(std::move(full)) {}
  void propose(std::span<const std::int32_t> context, std::size_t k, Draft& out) override {
    out.clear();
    for (size_t i = context.size(); i < full_.size() && out.tokens.size() < k; ++i) {
      out.tokens.push_back(full_[i]);
    }
  }

 private:
  std::vector<std::int32_t> full_;
};

// Proposes random ids, more than asked for, sometimes EOS.
class NoiseDrafter final : public Drafter {
 public:
  explicit NoiseDrafter(std::uint64_t seed) : g_(seed) {}
  void propose(std::span<const std::int32_t>, std::size_t k, Draft& out) override {
    out.clear();
    std::uniform_int_distribution<std::int32_t> id(0, 151935);
    for (size_t i = 0; i < k + 3; ++i) out.tokens.push_back(g_() % 5 == 0 ? 151645 : id(g_));
  }

 private:
  std::mt19937_64 g_;
};

GenerateResult run(Model& m, const GenerateOptions& opt) {
  return generate(m, qwen3().vocab(), default_prompt(), opt);
}

// A script that repeats itself, so prompt lookup finds real drafts.
std::vector<std::int32_t> repetitive_script() {
  std::vector<std::int32_t> s;
  for (int i = 0; i < 6; ++i) append(s, encode(" the cat sat on the mat, and"));
  return s;
}

}  // namespace

TEST(DecodeSpeculative, NgramDrafterProposesWhatFollowedTheLongestMatch) {
  NgramDrafter d(3, 1);
  Draft out;
  const std::vector<std::int32_t> ctx{1, 2, 3, 4, 9, 2, 3, 5, 7, 2, 3};
  d.propose(ctx, 2, out);
  EXPECT_EQ(out.tokens, (std::vector<std::int32_t>{5, 7}));  // most recent "2 3"
  d.propose(std::vector<std::int32_t>{1, 2, 3, 4}, 4, out);
  EXPECT_TRUE(out.tokens.empty());
  d.propose(std::vector<std::int32_t>{7, 8, 7}, 4, out);
  EXPECT_EQ(out.tokens, (std::vector<std::int32_t>{8, 7}));
  EXPECT_THROW(NgramDrafter(2, 3), Error);
  EXPECT_THROW(NgramDrafter(0, 0), Error);
}

TEST(DecodeSpeculative, GreedyOutputIsIdenticalToPlainGreedyForAnyDrafter) {
  struct Case {
    const char* name;
    bool script, penalties, logprobs, constraint, budget;
  };
  static const auto index = TokenIndex::build(qwen3().shared_vocab());
  const auto grammar = JsonGrammar::any_object(index, {});
  for (const Case& c : {Case{"plain", true, false, false, false, false},
                        Case{"noise", false, false, false, false, false},
                        Case{"penalties+logprobs", true, true, true, false, false},
                        Case{"json_object", true, false, false, true, false},
                        Case{"think_budget", true, false, true, false, true}}) {
    GenerateOptions opt;
    opt.max_tokens = 80;
    if (c.penalties) opt.penalties.repetition_penalty = 1.3f;
    if (c.logprobs) opt.sampler.top_logprobs_k = 2;
    if (c.budget) {
      opt.think.enabled = true;
      opt.think.starts_open = true;
      opt.think.budget = 9;
    }
    const auto script = c.script ? repetitive_script() : std::vector<std::int32_t>{};
    std::unique_ptr<JsonConstraint> jc;
    auto fresh_constraint = [&]() -> ConstraintEngine* {
      if (!c.constraint) return nullptr;
      jc = std::make_unique<JsonConstraint>(grammar);
      return jc.get();
    };
    ScriptedModel plain_model(drive_options(Drive::kHost, script));
    opt.constraint = fresh_constraint();
    const auto plain = run(plain_model, opt);
    auto full = default_prompt();
    append(full, plain.tokens);
    NgramDrafter ngram(3, 1);
    OracleDrafter oracle(full);
    NoiseDrafter noise(5);
    for (Drafter* d : std::initializer_list<Drafter*>{&ngram, &oracle, &noise}) {
      const auto ks =
          d == &ngram ? std::vector<std::uint32_t>{1, 4, 9} : std::vector<std::uint32_t>{3, 8};
      for (std::uint32_t k : ks) {
        SCOPED_TRACE(std::string(c.name) + " k=" + std::to_string(k));
        ScriptedModel model(drive_options(Drive::kThreaded, script));
        opt.constraint = fresh_constraint();
        opt.speculative.drafter = d;
        opt.speculative.max_draft = k;
        const auto r = run(model, opt);
        ASSERT_EQ(r.tokens, plain.tokens);
        EXPECT_EQ(r.content, plain.content);
        EXPECT_EQ(r.finish, plain.finish);
        EXPECT_EQ(r.stats.forced, plain.stats.forced);
        ASSERT_EQ(r.logprobs.size(), plain.logprobs.size());
        for (size_t i = 0; i < r.logprobs.size(); ++i) {
          ASSERT_EQ(r.logprobs[i].has_value(), plain.logprobs[i].has_value());
          if (r.logprobs[i]) {
            EXPECT_EQ(r.logprobs[i]->token_logprob, plain.logprobs[i]->token_logprob);
          }
        }
        if (d == &oracle) {
          EXPECT_LE(r.stats.steps * 2, plain.stats.steps + 1) << "drafts accepted";
        }
        auto ctx = default_prompt();
        ctx.insert(ctx.end(), r.tokens.begin(), r.tokens.end() - 1);
        const auto held = model.context();
        EXPECT_EQ(held, ctx) << "rejected drafts are dropped";
        if (d == &ngram && k == 4) {
          std::printf(
              "[ speculative ] %s ngram k=4: drafted %zu accepted %zu (%.0f%%), steps %zu vs %zu\n",
              c.name, r.stats.drafted, r.stats.accepted,
              r.stats.drafted ? 100.0 * static_cast<double>(r.stats.accepted) /
                                    static_cast<double>(r.stats.drafted)
                              : 0.0,
              r.stats.steps, plain.stats.steps);
        }
      }
    }
  }
}

TEST(DecodeSpeculative, TemperatureNeedsStochasticVerification) {
  ScriptedModel model(drive_options(Drive::kHost, {}));
  NgramDrafter d;
  GenerateOptions opt;
  opt.sampler.temperature = 0.7f;
  opt.speculative.drafter = &d;
  try {
    run(model, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.param(), "speculative");
  }
  opt.speculative.max_draft = 0;
  opt.speculative.stochastic = true;
  EXPECT_THROW(run(model, opt), Error);
}

namespace {

Distribution distribution_of(const std::vector<float>& logits, float temperature, float top_p) {
  SamplerConfig cfg;
  cfg.temperature = temperature;
  cfg.top_p = top_p;
  Workspace ws;
  return sampling_distribution(StepInput{LogitsView::f32(logits), {}, {}}, cfg, {}, ws);
}

std::int32_t draw(const Distribution& d, Pcg32& rng) {
  const double u = rng.next_f32();
  double acc = 0;
  for (size_t i = 0; i < d.ids.size(); ++i) {
    acc += d.probs[i];
    if (acc > u) return d.ids[i];
  }
  return d.ids.back();
}

test::Chi2 against(const Distribution& p, const std::vector<double>& observed, double n) {
  std::vector<double> expected(observed.size(), 0.0);
  for (size_t i = 0; i < p.ids.size(); ++i) {
    expected[static_cast<size_t>(p.ids[i])] = static_cast<double>(p.probs[i]) * n;
  }
  return test::chi2(expected, observed);
}

}  // namespace

TEST(DecodeSpeculative, StochasticAcceptancePreservesTheTargetDistributionChi2) {
  std::mt19937_64 g(11);
  const size_t v = 500;
  const auto target_logits = test::random_logits(g, v, false);
  auto draft_logits = target_logits;
  for (auto& x : draft_logits) x += std::normal_distribution<float>(0.0f, 1.5f)(g);
  // p: the verifier's sampling_distribution (temperature, top-p); q: a
  // different draft model's.
  const Distribution p = distribution_of(target_logits, 0.9f, 0.95f);
  const Distribution q = distribution_of(draft_logits, 1.2f, 1.0f);
  const int n = 200000;
  Pcg32 draft_rng = Pcg32::for_seed(3), rng = Pcg32::for_seed(4);
  std::vector<double> observed(v, 0.0), naive(v, 0.0);
  size_t accepted = 0;
  for (int i = 0; i < n; ++i) {
    const std::int32_t d = draw(q, draft_rng);
    const Acceptance a = accept_draft_token(p, &q, d, rng);
    accepted += a.accepted;
    observed[static_cast<size_t>(a.token)] += 1;
    naive[static_cast<size_t>(d)] += 1;  // accepting every draft: samples q
  }
  const auto c = against(p, observed, n);
  EXPECT_LT(c.stat, test::critical(c.df)) << "df " << c.df;
  const auto bad = against(p, naive, n);
  EXPECT_GT(bad.stat, test::critical(bad.df)) << "the test can tell q from p";
  std::printf("[ speculative ] chi2 %.1f (df %d, bound %.1f); acceptance %.3f\n", c.stat, c.df,
              test::critical(c.df), static_cast<double>(accepted) / static_cast<double>(n));
  // Deterministic drafts (q one-hot): a likely token and one p excludes.
  for (std::int32_t d : {p.ids[0], static_cast<std::int32_t>(v - 1)}) {
    std::vector<double> obs(v, 0.0);
    for (int i = 0; i < 100000; ++i)
      obs[static_cast<size_t>(accept_draft_token(p, nullptr, d, rng).token)] += 1;
    const auto one = against(p, obs, 100000);
    EXPECT_LT(one.stat, test::critical(one.df)) << "draft " << d;
  }
}

TEST(DecodeSpeculative, StochasticSpeculationIsDeterministicPerSeed) {
  GenerateOptions opt;
  opt.sampler.temperature = 0.8f;
  opt.sampler.seed = 99;
  opt.max_tokens = 60;
  NgramDrafter d;
  opt.speculative.drafter = &d;
  opt.speculative.stochastic = true;
  ScriptedModel a(drive_options(Drive::kThreaded, repetitive_script()));
  ScriptedModel b(drive_options(Drive::kHost, repetitive_script()));
  const auto ra = run(a, opt);
  const auto rb = run(b, opt);
  EXPECT_EQ(ra.tokens, rb.tokens);
  EXPECT_EQ(ra.tokens.size(), 60u);
  EXPECT_GT(ra.stats.accepted, 0u);
  std::printf(
      "[ speculative ] stochastic ngram: drafted %zu accepted %zu, steps %zu for %zu tokens\n",
      ra.stats.drafted, ra.stats.accepted, ra.stats.steps, ra.tokens.size());
}

// The one request → options path of the CLI and the server.
TEST(DecodeSpeculative, GenerationPlanBuildsSpeculationAndChecksTheSpec) {
  GenerationSpec spec;
  spec.sampler.temperature = 0.8f;
  spec.sampler.seed = 99;
  spec.max_tokens = 60;
  spec.speculation = Speculation::kNgram;
  const std::string rendered = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
  GenerationPlan plan = GenerationPlan::build(spec, qwen3().vocab(), rendered, nullptr);
  ASSERT_NE(plan.drafter, nullptr);
  EXPECT_EQ(plan.options.speculative.drafter, plan.drafter.get());
  EXPECT_TRUE(plan.options.speculative.stochastic);  // sampling: drafts verified stochastically
  EXPECT_EQ(plan.options.max_tokens, 60u);
  // A moved plan keeps its drafter, and the loop runs it like hand-built options.
  GenerationPlan moved = std::move(plan);
  EXPECT_EQ(moved.options.speculative.drafter, moved.drafter.get());
  ScriptedModel m(drive_options(Drive::kHost, repetitive_script()));
  const auto r = run(m, moved.options);
  EXPECT_EQ(r.tokens.size(), 60u);
  EXPECT_GT(r.stats.accepted, 0u);

  spec.sampler.temperature = 0.0f;
  EXPECT_FALSE(GenerationPlan::build(spec, qwen3().vocab(), rendered, nullptr)
                   .options.speculative.stochastic);
  auto param_of = [&](GenerationSpec s) {
    try {
      (void)GenerationPlan::build(s, qwen3().vocab(), rendered, nullptr);
    } catch (const Error& e) {
      return e.param();
    }
    return std::string("none");
  };
  GenerationSpec bad = spec;
  bad.max_draft = 0;
  EXPECT_EQ(param_of(bad), "max_draft");
  bad = spec;
  bad.penalties.logit_bias = {{static_cast<std::int32_t>(qwen3().vocab().size()), 1.0f}};
  EXPECT_EQ(param_of(bad), "logit_bias");
  bad = spec;
  bad.sampler.temperature = -1.0f;
  EXPECT_EQ(param_of(bad), "temperature");
  bad = spec;
  bad.max_tokens = 0;
  EXPECT_EQ(param_of(bad), "max_tokens");
}
