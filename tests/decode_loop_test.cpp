// The decode loop against golden tokens from a naive reference loop, over the
// real Qwen3 vocabulary: EOS, stop strings, think routing, the thinking
// budget, logprobs and constraints, in every way the loop drives a model.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/decode_fixture.hpp"

using namespace nextok;
using namespace nextok::testing;

namespace {

const Drive kDrives[] = {Drive::kHost, Drive::kThreaded, Drive::kDevicePick};

std::vector<std::uint32_t> qwen3_eos() {
  const auto e = qwen3().vocab().eos_ids();
  return {e.begin(), e.end()};
}

struct Streamed {
  std::string reasoning, content;
  std::vector<TokenEvent> events;
};

GenerateResult run(Model& model, const GenerateOptions& opt, Streamed* streamed = nullptr,
                   std::vector<std::int32_t> prompt = default_prompt()) {
  TokenCallback cb;
  if (streamed != nullptr) {
    cb = [streamed](const TokenEvent& e) {
      streamed->reasoning += e.reasoning;
      streamed->content += e.content;
      streamed->events.push_back(e);
      return true;
    };
  }
  return generate(model, qwen3().vocab(), prompt, opt, cb);
}

}  // namespace

TEST(DecodeEos, StopsOnEosAsAnIntOrAnArrayInEveryDrive) {
  const std::int32_t im_end = qwen3_id("<|im_end|>");
  const std::int32_t endoftext = qwen3_id("<|endoftext|>");
  std::vector<std::int32_t> script = encode("Hello world, this is nextok.");
  script.push_back(endoftext);
  script.push_back(im_end);
  for (Drive d : kDrives) {
    SCOPED_TRACE(drive_name(d));
    // EOS as one id: <|endoftext|> passes through as an ordinary special token.
    ScriptedModel model(drive_options(d, script));
    GenerateOptions opt;
    opt.eos_ids = {static_cast<std::uint32_t>(im_end)};
    const auto expected = reference_greedy(model, default_prompt(), 64, opt.eos_ids);
    const auto r = run(model, opt);
    EXPECT_EQ(r.tokens, expected);
    EXPECT_EQ(r.tokens.back(), im_end);
    EXPECT_EQ(r.finish, FinishReason::kStop);
    EXPECT_EQ(r.content, "Hello world, this is nextok.");  // specials are not text
    // The model holds the prompt and every token but the last.
    auto ctx = default_prompt();
    ctx.insert(ctx.end(), r.tokens.begin(), r.tokens.end() - 1);
    EXPECT_EQ(model.context(), ctx);
    // EOS as an array: the first listed id to appear ends the output.
    ScriptedModel model2(drive_options(d, script));
    opt.eos_ids = {static_cast<std::uint32_t>(im_end), static_cast<std::uint32_t>(endoftext)};
    const auto r2 = run(model2, opt);
    EXPECT_EQ(r2.tokens.back(), endoftext);
    EXPECT_EQ(r2.tokens.size(), r.tokens.size() - 1);
    // Empty: the vocabulary's EOS set.
    ScriptedModel model3(drive_options(d, script));
    opt.eos_ids.clear();
    const bool both = qwen3().vocab().is_eos(static_cast<std::uint32_t>(endoftext));
    EXPECT_EQ(run(model3, opt).tokens, both ? r2.tokens : r.tokens);
  }
}

TEST(DecodeEos, MaxTokensEndsWithLength) {
  for (Drive d : kDrives) {
    ScriptedModel model(drive_options(d, {}));
    GenerateOptions opt;
    opt.max_tokens = 7;
    const auto r = run(model, opt);
    EXPECT_EQ(r.tokens, reference_greedy(model, default_prompt(), 7, qwen3_eos()));
    EXPECT_EQ(r.tokens.size(), 7u);
    EXPECT_EQ(r.finish, FinishReason::kLength);
  }
}

TEST(DecodeStop, StopStringsSplitAcrossTokensTrimTheText) {
  // " EN", "TER" and " END" come as separate tokens: the stop string "END."
  // spans two of them and "EN" must be held back, then released.
  const std::vector<std::int32_t> script = encode("ENTER the END. And more text after it.");
  ASSERT_GT(script.size(), 6u);
  for (Drive d : kDrives) {
    SCOPED_TRACE(drive_name(d));
    ScriptedModel model(drive_options(d, script));
    GenerateOptions opt;
    opt.stop = {"END.", "never"};
    Streamed s;
    const auto r = run(model, opt, &s);
    EXPECT_EQ(r.finish, FinishReason::kStop);
    EXPECT_EQ(r.stop_string, "END.");
    EXPECT_EQ(r.content, "ENTER the ");
    EXPECT_EQ(s.content, r.content) << "the stream leaks nothing past the stop string";
    // It stopped at the token that completed the match.
    std::string seen;
    size_t n = 0;
    for (auto t : script) {
      seen += qwen3().decode(std::vector<std::uint32_t>{static_cast<std::uint32_t>(t)});
      ++n;
      if (seen.find("END.") != std::string::npos) break;
    }
    EXPECT_EQ(r.tokens.size(), n);
  }
}

TEST(DecodeThink, MarkersSplitAcrossPiecesAndPartialUtf8) {
  // "<", "think", ">" as plain-text tokens (not the added <think> id), and a
  // character whose UTF-8 bytes arrive in different tokens.
  std::vector<std::int32_t> script;
  for (const char* piece : {"<", "think", ">"}) append(script, encode(piece));
  append(script, encode("Reason"));
  std::vector<std::int32_t> split_char;
  for (const char* c : {"𝄞", "🜏", "𓀀", "𒀱"}) {
    if (encode(c).size() > 1) {
      split_char = encode(c);
      break;
    }
  }
  ASSERT_GT(split_char.size(), 1u) << "no character splits into byte tokens";
  append(script, split_char);
  for (const char* piece : {"</", "think", ">"}) append(script, encode(piece));
  append(script, encode("Answer"));
  script.push_back(qwen3_id("<|im_end|>"));
  const std::string ch =
      qwen3().decode(std::vector<std::uint32_t>(split_char.begin(), split_char.end()));
  for (Drive d : kDrives) {
    SCOPED_TRACE(drive_name(d));
    ScriptedModel model(drive_options(d, script));
    GenerateOptions opt;
    opt.think.enabled = true;
    Streamed s;
    const auto r = run(model, opt, &s);
    EXPECT_EQ(r.reasoning, "Reason" + ch);
    EXPECT_EQ(r.content, "Answer");
    EXPECT_EQ(s.reasoning, r.reasoning);
    EXPECT_EQ(s.content, r.content);
    // The first byte token of the character releases no text.
    ASSERT_EQ(s.events.size(), script.size());
    EXPECT_EQ(s.events[4].reasoning, "");
    EXPECT_EQ(s.events[4].channel, Channel::kReasoning);
    EXPECT_EQ(s.events.back().channel, Channel::kContent);
  }
}

TEST(DecodeThink, QwenTemplatePrefilledThinkBlock) {
  std::vector<std::int32_t> script = encode("First I check.");
  script.push_back(qwen3_id("</think>"));
  append(script, encode("\n\nDone."));
  script.push_back(qwen3_id("<|im_end|>"));
  auto prompt = encode("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n");
  ScriptedModel model(drive_options(Drive::kThreaded, script));
  GenerateOptions opt;
  opt.think.enabled = true;
  opt.think.starts_open = true;
  const auto r = run(model, opt, nullptr, prompt);
  EXPECT_EQ(r.reasoning, "First I check.");
  EXPECT_EQ(r.content, "\n\nDone.");
  EXPECT_EQ(r.stats.forced, 0u);
}

TEST(DecodeBudget, ForcedCloseFiresOnceDiscardsTheSuccessorAndHasNoLogprobs) {
  const std::int32_t open = qwen3_id("<think>");
  const std::int32_t close = qwen3_id("</think>");
  std::vector<std::int32_t> script{open};
  append(script, encode(" one two three four five six seven eight nine ten"));
  script.push_back(close);
  append(script, encode("Answer."));
  script.push_back(qwen3_id("<|im_end|>"));
  const std::uint32_t budget = 3;
  // <think>, then budget + 1 reasoning pieces, then the forced </think>.
  const std::size_t forced_at = 1 + budget + 1;
  for (Drive d : kDrives) {
    for (std::uint32_t lp : {0u, 3u}) {
      if (d == Drive::kDevicePick && lp > 0) continue;  // logprobs need host rows
      SCOPED_TRACE(std::string(drive_name(d)) + " lp=" + std::to_string(lp));
      ScriptedModel model(drive_options(d, script));
      GenerateOptions opt;
      opt.think.enabled = true;
      opt.think.budget = budget;
      opt.sampler.top_logprobs_k = lp;
      opt.max_tokens = 40;
      const auto expected =
          reference_greedy(model, default_prompt(), 40, qwen3_eos(), forced_at, close);
      Streamed s;
      const auto r = run(model, opt, &s);
      EXPECT_EQ(r.tokens, expected);
      EXPECT_EQ(r.tokens[forced_at], close);
      EXPECT_EQ(r.stats.forced, 1u);
      EXPECT_EQ(r.stats.discarded_successors, 1u);
      int forced_events = 0;
      for (size_t i = 0; i < s.events.size(); ++i) {
        if (s.events[i].forced) {
          ++forced_events;
          EXPECT_EQ(i, forced_at);
          EXPECT_EQ(s.events[i].logprobs, nullptr);
        } else if (lp > 0) {
          EXPECT_NE(s.events[i].logprobs, nullptr);
        }
      }
      EXPECT_EQ(forced_events, 1);
      if (lp > 0) {
        ASSERT_EQ(r.logprobs.size(), r.tokens.size());
        EXPECT_FALSE(r.logprobs[forced_at].has_value());
      }
      EXPECT_EQ(r.reasoning, " one two three four");
      // The successor the model would have chosen after the last reasoning
      // piece never entered the context: </think> follows that piece.
      auto ctx = default_prompt();
      ctx.insert(ctx.end(), r.tokens.begin(), r.tokens.end() - 1);
      EXPECT_EQ(model.context(), ctx);
      if (d == Drive::kDevicePick) {
        // One pick per token the model chose, plus the discarded successor
        // and the pick queued behind the final EOS.
        EXPECT_EQ(model.picks_made(), r.tokens.size() - 1 + 1 + 1);
      }
    }
  }
}

TEST(DecodeBudget, NoBudgetNoInjectionAndMissingCloseTokenIsAnError) {
  std::vector<std::int32_t> script{qwen3_id("<think>")};
  append(script, encode(" a b c d e f"));
  ScriptedModel model(drive_options(Drive::kHost, script));
  GenerateOptions opt;
  opt.think.enabled = true;
  opt.max_tokens = 8;
  EXPECT_EQ(run(model, opt).stats.forced, 0u);
  opt.think.budget = 1;
  opt.think.close = "</reasoning>";
  try {
    ScriptedModel m2(drive_options(Drive::kHost, script));
    run(m2, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.param(), "thinking_budget");
  }
}

TEST(DecodeLogprobs, EveryTokenCarriesTheRawLogitLogprobs) {
  ScriptedModel model(drive_options(Drive::kThreaded, encode("Some text to score here.")));
  GenerateOptions opt;
  opt.sampler.top_logprobs_k = 5;
  opt.sampler.temperature = 0.7f;
  opt.sampler.seed = 7;
  opt.max_tokens = 12;
  const auto r = run(model, opt);
  ASSERT_EQ(r.logprobs.size(), 12u);
  auto ctx = default_prompt();
  const size_t plen = ctx.size();
  for (size_t i = 0; i < r.tokens.size(); ++i) {
    const auto row = model.row_after(ctx, plen);
    const auto want = compute_top_logprobs(LogitsView::f32(row), r.tokens[i], 5);
    ASSERT_TRUE(r.logprobs[i].has_value());
    EXPECT_EQ(r.logprobs[i]->token_id, r.tokens[i]);
    EXPECT_EQ(r.logprobs[i]->token_logprob, want->token_logprob);
    ASSERT_EQ(r.logprobs[i]->top.size(), 5u);
    for (size_t k = 0; k < 5; ++k) EXPECT_EQ(r.logprobs[i]->top[k].token_id, want->top[k].token_id);
    ctx.push_back(r.tokens[i]);
  }
  // Same seed, same output; the default drive gives the same tokens.
  ScriptedModel again(drive_options(Drive::kHost, encode("Some text to score here.")));
  EXPECT_EQ(run(again, opt).tokens, r.tokens);
}

TEST(DecodeLoop, CancelAndBadOptions) {
  ScriptedModel model(drive_options(Drive::kThreaded, {}));
  GenerateOptions opt;
  int n = 0;
  const auto r = generate(model, qwen3().vocab(), default_prompt(), opt,
                          [&](const TokenEvent&) { return ++n < 3; });
  EXPECT_EQ(r.finish, FinishReason::kCancelled);
  EXPECT_EQ(r.tokens.size(), 3u);
  auto expect_param = [&](GenerateOptions o, std::vector<std::int32_t> prompt, const char* param) {
    ScriptedModel m(drive_options(Drive::kHost, {}));
    try {
      generate(m, qwen3().vocab(), prompt, o);
      ADD_FAILURE() << "no error for " << param;
    } catch (const Error& e) {
      EXPECT_EQ(e.param(), param);
    }
  };
  expect_param(opt, {}, "prompt");
  GenerateOptions o = opt;
  o.max_tokens = 0;
  expect_param(o, default_prompt(), "max_tokens");
  o = opt;
  o.sampler.top_p = -0.5f;  // 0 and >= 1 are "off"; negative is an error
  expect_param(o, default_prompt(), "top_p");
  o = opt;
  o.stop = {""};
  expect_param(o, default_prompt(), "stop");
  ScriptedModelOptions narrow;
  narrow.width = 1000;
  ScriptedModel small(narrow);
  EXPECT_THROW(generate(small, qwen3().vocab(), default_prompt(), opt), Error);
}

TEST(DecodeConstraint, ThinkBlockThenSchemaValidJsonInEveryMode) {
  static const auto index = TokenIndex::build(qwen3().shared_vocab());
  const char* schema = R"({"type":"object","properties":{
      "name":{"type":"string","maxLength":12},
      "score":{"type":"integer","minimum":0,"maximum":100},
      "tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3}},
      "required":["name","score","tags"],"additionalProperties":false})";
  JsonConstraintOptions jopt;
  jopt.max_whitespace = 2;
  const auto grammar = JsonGrammar::from_schema(index, schema, jopt);
  std::vector<std::int32_t> script = encode("Let me think about the answer carefully now.");
  script.push_back(qwen3_id("</think>"));
  for (bool overlap : {true, false}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      for (bool budget : {false, true}) {
        SCOPED_TRACE("overlap=" + std::to_string(overlap) + " seed=" + std::to_string(seed) +
                     " budget=" + std::to_string(budget));
        ScriptedModelOptions mo = drive_options(Drive::kThreaded, script);
        mo.seed = seed;
        ScriptedModel model(mo);
        JsonConstraint c(grammar);
        GenerateOptions opt;
        opt.constraint = &c;
        opt.think.enabled = true;
        opt.think.starts_open = true;
        if (budget) opt.think.budget = 4;
        opt.sampler.temperature = 1.0f;
        opt.sampler.seed = seed;
        opt.overlap_mask = overlap;
        opt.max_tokens = 300;
        const auto r = run(model, opt);
        ASSERT_EQ(r.finish, FinishReason::kStop) << r.content;
        EXPECT_EQ(r.stats.forced, budget ? 1u : 0u);
        EXPECT_FALSE(r.reasoning.empty());
        const auto j = nlohmann::json::parse(r.content);
        ASSERT_TRUE(j.is_object()) << r.content;
        EXPECT_EQ(j.size(), 3u);
        EXPECT_TRUE(j["name"].is_string());
        EXPECT_LE(j["score"].get<int>(), 100);
        EXPECT_GE(j["score"].get<int>(), 0);
        EXPECT_LE(j["tags"].size(), 3u);
      }
    }
  }
}

TEST(DecodeConstraint, OverlapGivesTheSameTokensAsSerialMasks) {
  static const auto index = TokenIndex::build(qwen3().shared_vocab());
  const auto grammar = JsonGrammar::any_object(index, {});
  std::vector<std::vector<std::int32_t>> outs;
  for (bool overlap : {true, false}) {
    ScriptedModel model(drive_options(Drive::kThreaded, {}));
    JsonConstraint c(grammar);
    GenerateOptions opt;
    opt.constraint = &c;
    opt.overlap_mask = overlap;
    opt.sampler.temperature = 0.8f;
    opt.max_tokens = 60;
    outs.push_back(run(model, opt).tokens);
  }
  EXPECT_EQ(outs[0], outs[1]);
}
