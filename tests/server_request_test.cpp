// OpenAI request parsing: every bad input is a 400 naming the parameter, and
// good input maps onto the sampler, penalties, constraint and stream options.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "server/api_error.hpp"
#include "server/call_scanner.hpp"
#include "server/request.hpp"

namespace nextok::server {
namespace {

const std::string kMsgs = R"("messages": [{"role": "user", "content": "hi"}])";

ApiRequest chat(const std::string& extra) {
  return parse_request("{" + kMsgs + (extra.empty() ? "" : ", " + extra) + "}", Endpoint::kChat);
}

// The ApiError a body raises (status 0 if none).
ApiError error_of(const std::string& body, Endpoint endpoint = Endpoint::kChat) {
  try {
    parse_request(body, endpoint);
  } catch (const ApiError& e) {
    return e;
  }
  return ApiError(0, "none", "no error");
}

TEST(ServerRequest, DefaultsFollowOpenAI) {
  const ApiRequest r = chat("");
  EXPECT_EQ(r.sampler.temperature, 1.0f);  // OpenAI's default, not greedy
  EXPECT_FALSE(r.sampler.seed.has_value());
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.sampler.top_logprobs_k, 0u);
  EXPECT_FALSE(r.stream);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].role, "user");
}

TEST(ServerRequest, MapsEveryParameter) {
  const ApiRequest r = chat(
      R"("temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "seed": -1,
         "repetition_penalty": 1.1, "presence_penalty": 0.5, "frequency_penalty": -0.5,
         "logit_bias": {"42": -100, "7": 2.5}, "max_completion_tokens": 9, "stop": ["a", "bc"],
         "logprobs": true, "top_logprobs": 3, "stream": true,
         "stream_options": {"include_usage": true}, "thinking_budget": 5,
         "response_format": {"type": "json_schema",
                             "json_schema": {"name": "n", "schema": {"type": "integer"}, "strict": true}})");
  EXPECT_FLOAT_EQ(r.sampler.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampler.top_p, 0.9f);
  EXPECT_EQ(r.sampler.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampler.min_p, 0.05f);
  EXPECT_EQ(*r.sampler.seed, ~0ull);
  EXPECT_FLOAT_EQ(r.penalties.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(r.penalties.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.penalties.frequency_penalty, -0.5f);
  ASSERT_EQ(r.penalties.logit_bias.size(), 2u);
  EXPECT_EQ(*r.max_tokens, 9u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3u);
  EXPECT_EQ(r.sampler.top_logprobs_k, 3u);
  EXPECT_TRUE(r.stream && r.include_usage);
  EXPECT_EQ(*r.thinking_budget, 5u);
  EXPECT_EQ(r.format, ResponseFormat::kJsonSchema);
  EXPECT_TRUE(r.schema_strict);
  EXPECT_EQ(r.schema, R"({"type":"integer"})");
}

TEST(ServerRequest, MessageShapes) {
  const ApiRequest r = parse_request(
      R"({"messages": [{"role": "developer", "content": "be brief"},
                       {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                       {"role": "assistant", "content": null, "reasoning_content": "hm"},
                       {"role": "user", "content": "c"}],
          "chat_template_kwargs": {"enable_thinking": false, "tools_in_user_message": false,
                                   "builtin_tools": ["brave_search", "wolfram_alpha"]}})",
      Endpoint::kChat);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "ab");
  EXPECT_EQ(*r.messages[2].reasoning_content, "hm");
  EXPECT_EQ(r.enable_thinking, false);
  EXPECT_EQ(r.tools_in_user_message, false);
  EXPECT_EQ(r.builtin_tools, (std::vector<std::string>{"brave_search", "wolfram_alpha"}));
  EXPECT_EQ(error_of(R"({"messages": [{"role": "user", "content": "x"}],
                         "chat_template_kwargs": {"builtin_tools": "brave_search"}})",
                     Endpoint::kChat)
                .param(),
            "chat_template_kwargs.builtin_tools");
  EXPECT_EQ(error_of(R"({"messages": [{"role": "user", "content": "x"}],
                         "chat_template_kwargs": {"builtin_tools": ["a", 1]}})",
                     Endpoint::kChat)
                .param(),
            "chat_template_kwargs.builtin_tools[1]");
  EXPECT_EQ(error_of(R"({"messages": [{"role": "user", "content": "x"}],
                         "chat_template_kwargs": {"tools_in_user_message": "no"}})",
                     Endpoint::kChat)
                .param(),
            "chat_template_kwargs.tools_in_user_message");
}

TEST(ServerRequest, CompletionPrompts) {
  EXPECT_EQ(parse_request(R"({"prompt": "abc"})", Endpoint::kCompletion).prompt, "abc");
  EXPECT_EQ(parse_request(R"({"prompt": ["abc"]})", Endpoint::kCompletion).prompt, "abc");
  const ApiRequest ids =
      parse_request(R"({"prompt": [1, 2, 3], "logprobs": 0})", Endpoint::kCompletion);
  EXPECT_TRUE(ids.prompt_is_ids);
  EXPECT_EQ(ids.prompt_ids, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_TRUE(ids.logprobs);
  EXPECT_EQ(ids.sampler.top_logprobs_k, 1u);  // the chosen token's logprob needs k >= 1
  EXPECT_EQ(error_of(R"({"prompt": ["a", "b"]})", Endpoint::kCompletion).param(), "prompt");
  EXPECT_EQ(error_of(R"({"prompt": ""})", Endpoint::kCompletion).param(), "prompt");
  EXPECT_EQ(error_of(R"({"prompt": [1, -2]})", Endpoint::kCompletion).param(), "prompt[1]");
  EXPECT_EQ(error_of(R"({"prompt": "a", "echo": true})", Endpoint::kCompletion).param(), "echo");
  EXPECT_EQ(error_of(R"({"prompt": "a", "best_of": 2})", Endpoint::kCompletion).param(), "best_of");
  EXPECT_EQ(error_of(R"({})", Endpoint::kCompletion).param(), "prompt");
}

struct BadCase {
  const char* body;  // inside {...} after the messages
  const char* param;
};

class ServerRequestBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ServerRequestBad, IsA400NamingTheParameter) {
  const BadCase c = GetParam();
  const ApiError e = error_of("{" + kMsgs + ", " + c.body + "}");
  EXPECT_EQ(e.status(), 400) << c.body;
  EXPECT_EQ(e.param(), c.param) << c.body;
  EXPECT_EQ(e.type(), "invalid_request_error");
  const auto j = e.to_json();
  EXPECT_TRUE(j["error"].contains("message") && j["error"].contains("code"));
}

INSTANTIATE_TEST_SUITE_P(
    All, ServerRequestBad,
    ::testing::Values(
        BadCase{R"("temperature": 2.5)", "temperature"},
        BadCase{R"("temperature": "hot")", "temperature"}, BadCase{R"("top_p": -0.1)", "top_p"},
        BadCase{R"("top_p": 1.5)", "top_p"}, BadCase{R"("top_k": -2)", "top_k"},
        BadCase{R"("top_k": 1.5)", "top_k"}, BadCase{R"("min_p": -0.1)", "min_p"},
        BadCase{R"("repetition_penalty": 0)", "repetition_penalty"},
        BadCase{R"("presence_penalty": 3)", "presence_penalty"},
        BadCase{R"("frequency_penalty": -2.1)", "frequency_penalty"},
        BadCase{R"("logit_bias": {"abc": 1})", "logit_bias"},
        // Only the canonical decimal spelling is a token id.
        BadCase{R"("logit_bias": {" 1": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"1 ": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"+1": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"01": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"00": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"-0": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"-1": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"1e3": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"2147483648": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"99999999999999999999": 1})", "logit_bias"},
        BadCase{R"("logit_bias": {"5": 101})", "logit_bias.5"},
        BadCase{R"("logit_bias": [1])", "logit_bias"}, BadCase{R"("seed": "x")", "seed"},
        BadCase{R"("seed": 0.5)", "seed"}, BadCase{R"("max_tokens": 0)", "max_tokens"},
        BadCase{R"("max_completion_tokens": -5)", "max_completion_tokens"},
        BadCase{R"("n": 2)", "n"}, BadCase{R"("stop": "")", "stop"},
        BadCase{R"("stop": 5)", "stop"},
        BadCase{R"("stop": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"])",
                "stop"},
        BadCase{R"("logprobs": 1)", "logprobs"},
        BadCase{R"("logprobs": true, "top_logprobs": 21)", "top_logprobs"},
        BadCase{R"("top_logprobs": 2)", "top_logprobs"},
        BadCase{R"("response_format": {"type": "yaml"})", "response_format.type"},
        BadCase{R"("response_format": {"type": "json_schema"})", "response_format.json_schema"},
        BadCase{R"("response_format": {"type": "json_schema", "json_schema": {"name": "x"}})",
                "response_format.json_schema.schema"},
        BadCase{R"("response_format": "json")", "response_format"},
        BadCase{R"("speculative": "medusa", "temperature": 0)", "speculative"},
        BadCase{R"("speculative": {"max_draft": 0}, "temperature": 0)", "speculative.max_draft"},
        BadCase{R"("stream_options": {"include_usage": true})", "stream_options"},
        BadCase{R"("stream": "yes")", "stream"},
        BadCase{R"("tools": [{"type": "function"}])", "tools[0].function"},
        BadCase{R"("tools": {})", "tools"},
        BadCase{R"("tool_choice": "required")", "tool_choice"},  // without tools
        BadCase{R"("tools": [{"type": "function", "function": {"name": "f"}}],
                   "response_format": {"type": "json_object"})",
                "response_format"},
        BadCase{R"("structured_outputs": {"choice": []})", "structured_outputs.choice"},
        BadCase{R"("guided_choice": ["a", 2])", "guided_choice[1]"},
        BadCase{R"("guided_json": "[1, 2]")", "guided_json"},
        BadCase{R"("structured_outputs": {"grammar": 1})", "structured_outputs.grammar"},
        BadCase{R"("structured_outputs": {"regex": "a", "whitespace_pattern": "x"})",
                "structured_outputs.whitespace_pattern"},
        BadCase{R"("tools": [{"type": "function", "function": {"name": "f"}}],
                   "guided_regex": "a")",
                "guided_regex"},
        BadCase{R"("thinking_budget": -1)", "thinking_budget"}, BadCase{R"("model": 5)", "model"}));

TEST(ServerRequest, StructuredOutputsInEverySpelling) {
  struct Case {
    const char* body;
    ResponseFormat format;
    const char* param;
  };
  const Case cases[] = {
      {R"("structured_outputs": {"regex": "a+"})", ResponseFormat::kRegex,
       "structured_outputs.regex"},
      {R"("guided_regex": "a+")", ResponseFormat::kRegex, "guided_regex"},
      {R"("regex": "a+")", ResponseFormat::kRegex, "regex"},
      {R"("structured_outputs": {"choice": ["a", "b"]})", ResponseFormat::kChoice,
       "structured_outputs.choice"},
      {R"("guided_choice": ["a"])", ResponseFormat::kChoice, "guided_choice"},
      {R"("structured_outputs": {"grammar": "root ::= \"a\""})", ResponseFormat::kGbnf,
       "structured_outputs.grammar"},
      {R"("structured_outputs": {"grammar": "start: \"a\""})", ResponseFormat::kLark,
       "structured_outputs.grammar"},
      {R"("guided_grammar": "start: \"a\"")", ResponseFormat::kLark, "guided_grammar"},
      {R"("grammar": "root ::= \"a\"")", ResponseFormat::kGbnf, "grammar"},
      // SGLang's ebnf is GBNF-like whatever it holds.
      {R"("ebnf": "root: x")", ResponseFormat::kGbnf, "ebnf"},
      {R"("structured_outputs": {"json": {"type": "integer"}})", ResponseFormat::kJsonSchema,
       "structured_outputs.json"},
      {R"("guided_json": "{\"type\": \"integer\"}")", ResponseFormat::kJsonSchema, "guided_json"},
      {R"("json_schema": "{\"type\": \"integer\"}")", ResponseFormat::kJsonSchema, "json_schema"},
      {R"("structured_outputs": {"json_object": true})", ResponseFormat::kJsonObject,
       "structured_outputs.json_object"},
  };
  for (const Case& c : cases) {
    const ApiRequest r = chat(c.body);
    EXPECT_EQ(r.format, c.format) << c.body;
    EXPECT_EQ(r.format_param, c.param) << c.body;
  }
  EXPECT_EQ(chat(R"("guided_choice": ["x", "y"])").choices, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(chat(R"("guided_json": "{\"type\": \"integer\"}")").schema, R"({"type":"integer"})");
  EXPECT_EQ(chat(R"("structured_outputs": {"json_object": false})").format, ResponseFormat::kText);
}

TEST(ServerRequest, SchemaTextNestingIsRefusedBeforeParsing) {
  // Nesting inside a string, which the body's depth check cannot see.
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const ApiError e = error_of("{" + kMsgs + R"(, "guided_json": ")" + deep + R"("})");
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.param(), "guided_json");
  EXPECT_EQ(chat(R"("guided_json": "{\"anyOf\": [{\"items\": [{}]}]}")").format,
            ResponseFormat::kJsonSchema);
}

TEST(ServerRequest, CanonicalLogitBiasKeysAreTokenIds) {
  const ApiRequest r = chat(R"("logit_bias": {"0": 1, "17": -2, "2147483647": 3})");
  ASSERT_EQ(r.penalties.logit_bias.size(), 3u);
  std::vector<std::int32_t> ids;
  for (const auto& [id, bias] : r.penalties.logit_bias) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::int32_t>{0, 17, 2147483647}));
}

TEST(ServerRequest, TopPZeroIsOff) {
  // mlx-lm's default top_p is 0; like 1, it turns the filter off.
  EXPECT_EQ(chat(R"("top_p": 0)").sampler.top_p, 0.0f);
  EXPECT_NO_THROW(chat(R"("top_p": 0)").sampler.validate());
  EXPECT_EQ(chat(R"("top_p": 1)").sampler.top_p, 1.0f);
}

TEST(ServerRequest, TinyTemperatureIsGreedy) {
  // Below kGreedyTemperature (vLLM's 1e-5) the request is greedy: it
  // validates and may use greedy-only features such as speculation.
  for (const char* t : {"1e-40", "1e-6", "9e-6"}) {
    const ApiRequest r = chat(std::string(R"("temperature": )") + t);
    EXPECT_NO_THROW(r.sampler.validate()) << t;
    EXPECT_FALSE(r.sampler.sampling_active()) << t;
    EXPECT_EQ(
        error_of("{" + kMsgs + R"(, "speculative": "ngram", "temperature": )" + t + "}").status(),
        0)
        << t;
  }
  EXPECT_TRUE(chat(R"("temperature": 1e-5)").sampler.sampling_active());
}

TEST(ServerRequest, OnlyOneChoiceMessageStatesTheRealLimit) {
  for (const char* n : {"0", "2", "200", "-1"}) {
    const ApiError e = error_of("{" + kMsgs + R"(, "n": )" + n + "}");
    EXPECT_EQ(e.status(), 400) << n;
    EXPECT_EQ(e.param(), "n") << n;
    const auto msg = e.to_json()["error"]["message"].get<std::string>();
    EXPECT_NE(msg.find("only n = 1 is supported"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("128"), std::string::npos) << msg;
  }
  EXPECT_EQ(error_of("{" + kMsgs + R"(, "n": 1})").status(), 0);
  const ApiError e = error_of(R"({"prompt": "a", "best_of": 500})", Endpoint::kCompletion);
  EXPECT_EQ(e.param(), "best_of");
  const auto msg = e.to_json()["error"]["message"].get<std::string>();
  EXPECT_NE(msg.find("only best_of = 1 is supported"), std::string::npos) << msg;
}

TEST(ServerRequest, MalformedBodies) {
  for (const char* body : {"", "{", "[1,2]", "null", "{\"messages\": }", "\"x\"", "1.5E+5555555515",
                           "{\"temperature\": 1e99999}"}) {
    const ApiError e = error_of(body);
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), "") << body;
  }
  EXPECT_EQ(error_of(R"({"messages": []})").param(), "messages");
  EXPECT_EQ(error_of(R"({"messages": [{"content": "x"}]})").param(), "messages[0].role");
  EXPECT_EQ(error_of(R"({"messages": [{"role": "function", "content": "x"}]})").param(),
            "messages[0].role");
  EXPECT_EQ(
      error_of(R"({"messages": [{"role": "user", "content": "x", "tool_calls": []}]})").param(),
      "messages[0].tool_calls");
  EXPECT_EQ(error_of(R"({"messages": [{"role": "user"}]})").param(), "messages[0].content");
  EXPECT_EQ(
      error_of(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})").param(),
      "messages[0].content[0].type");
}

TEST(ServerRequest, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep(100000, '[');
  EXPECT_EQ(error_of(deep).status(), 400);
  // Brackets inside strings do not count.
  const std::string ok = "{" + kMsgs + R"(, "stop": ")" + std::string(1000, '[') + "\"}";
  EXPECT_EQ(error_of(ok).status(), 0);
}

}  // namespace
}  // namespace nextok::server

TEST(ServerTools, OutputSplitsIntoTextAndCalls) {
  using nextok::server::parse_tool_output;
  auto p = parse_tool_output(
      "Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, \"<x>\"]}}\n"
      "</tool_call>\n<tool_call>{\"arguments\": {}, \"name\": \"g\"}</tool_call>");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "f");
  EXPECT_EQ(p.calls[0].arguments, R"({"a": [1, "<x>"]})");
  EXPECT_EQ(p.calls[1].name, "g");
  EXPECT_EQ(p.content, "Let me check.");
  p = parse_tool_output("\n\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
  EXPECT_FALSE(p.content.has_value());
  // A call cut by max_tokens is text.
  p = parse_tool_output("<tool_call>{\"name\": \"f\", \"argu");
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, "<tool_call>{\"name\": \"f\", \"argu");
  p = parse_tool_output("plain");
  EXPECT_EQ(p.content, "plain");
}

TEST(ServerTools, PythonJsonSpelling) {
  using nextok::server::python_json;
  const auto v = nlohmann::ordered_json::parse(
      R"({"z": 1, "a": [1.5, 2.0, 1e20, true, null], "s": "é\n\"\u0001"})");
  EXPECT_EQ(python_json(v),
            "{\"z\": 1, \"a\": [1.5, 2.0, 1e+20, true, null], \"s\": \"é\\n\\\"\\u0001\"}");
}

// The scanner read one byte at a time finds what it finds on the whole
// text, and never reports arguments it has not seen.
TEST(ServerTools, CallScannerStreamsTheArgumentsItWillReturn) {
  using nextok::server::CallScanner;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"( {"name": "f", "arguments": {"a": [1, "}\"{"], "b": {}}} )",
       R"({"a": [1, "}\"{"], "b": {}})"},
      {R"({"arguments":"x\\y", "name":"g"})", R"("x\\y")"},
      {R"({"name":"h","arguments":12.5e3})", "12.5e3"},
      {R"({"name": "k", "arguments": [] , "extra": {"arguments": 1}})", "[]"},
  };
  for (const auto& [text, args] : cases) {
    CallScanner whole(0, "arguments");
    whole.advance(text);
    ASSERT_TRUE(whole.done()) << text;
    ASSERT_NE(whole.args_end(), CallScanner::kOpen) << text;
    EXPECT_EQ(text.substr(whole.args_begin(), whole.args_end() - whole.args_begin()), args);
    EXPECT_EQ(nextok::server::raw_member(text, "arguments"), args);
    CallScanner inc(0, "arguments");
    for (size_t n = 1; n <= text.size(); ++n) {
      inc.advance(std::string_view(text).substr(0, n));
      ASSERT_FALSE(inc.failed()) << text << " at " << n;
      if (inc.args_begin() != CallScanner::kOpen) {
        const size_t upto = inc.args_end() != CallScanner::kOpen ? inc.args_end() : inc.end();
        EXPECT_TRUE(args.starts_with(text.substr(inc.args_begin(), upto - inc.args_begin())))
            << text << " at " << n;
      }
    }
    EXPECT_TRUE(inc.done());
    EXPECT_EQ(inc.name(), whole.name());
  }
  CallScanner bad(0, "arguments");
  bad.advance("[1]");
  EXPECT_TRUE(bad.failed());
}
