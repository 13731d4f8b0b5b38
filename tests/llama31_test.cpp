// Llama 3.1 tool calls: the long template's rendering and recognition
// (the byte-equal oracle is tests/python/test_llama31_chat.py), the
// text-or-call constraint checked mask bit by mask bit against a reference
// that judges whole texts (JsonConstraint for the value, tested on its own),
// and the server's reading of a Llama 3.1 turn.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "json_schema_test_util.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"
#include "nextok/json_or_text.hpp"
#include "nextok/mask.hpp"
#include "nextok/vocab.hpp"
#include "server/tools.hpp"

namespace {

using nextok::ChatFormat;
using nextok::ChatMessage;
using nextok::ChatOptions;
using nextok::ChatTemplate;
using nextok::ErrorCode;
using nextok::JsonConstraint;
using nextok::JsonGrammar;
using nextok::JsonOrTextConstraint;
using nextok::JsonOrTextGrammar;
using nextok::TokenIndex;

// The markers the detector needs, in template syntax.
constexpr const char* kLongTemplate =
    "{{- bos_token }}{%- if not tools_in_user_message is defined %}{%- endif %}"
    "{{- \"Cutting Knowledge Date: December 2023\\n\" }}{{- \"Today Date: \" + date_string }}"
    "{{- \"Given the following functions, please respond with a JSON for a function call \" }}"
    "{{- '\"parameters\": ' }}{{- raise_exception(\"This model only supports single tool-calls "
    "at once!\") }}<|start_header_id|><|end_header_id|><|eot_id|>";

ChatMessage msg(std::string role, std::string content,
                std::vector<nextok::ChatToolCall> calls = {}) {
  return ChatMessage{std::move(role), std::move(content), std::nullopt, std::move(calls)};
}

template <class F>
void expect_code(F f, ErrorCode code, const std::string& param) {
  try {
    f();
    FAIL() << "expected an error";
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.param(), param) << e.what();
  }
}

TEST(Llama31Chat, DetectsTheLongTemplate) {
  const auto t = ChatTemplate::detect(kLongTemplate, "<|begin_of_text|>", "<|eot_id|>");
  EXPECT_EQ(t.format(), ChatFormat::kLlama31);
  EXPECT_STREQ(nextok::chat_format_name(t.format()), "llama3.1");
  EXPECT_TRUE(nextok::chat_format_has_tools(t.format()));
  // A relative with a date header but not the tool parts is refused.
  expect_code(
      [] {
        (void)ChatTemplate::detect(
            "<|start_header_id|><|end_header_id|><|eot_id|>Cutting Knowledge Date", "", "");
      },
      ErrorCode::kUnsupported, "chat_template");
}

TEST(Llama31Chat, RendersToolsACallAndItsResult) {
  const auto t = ChatTemplate::detect(kLongTemplate, "<|begin_of_text|>", "<|eot_id|>");
  const std::vector<ChatMessage> m = {msg("system", " Be brief. "), msg("user", "Up?"),
                                      msg("assistant", "", {{"ping", R"({"n":1})"}}),
                                      msg("tool", "pong")};
  ChatOptions opt;
  opt.current_date = "05 Dec 2026";
  opt.tools = {
      R"({"type": "function", "function": {"name": "ping", "parameters": {"type": "object", )"
      R"("properties": {"n": {"type": "integer"}}, "required": []}}})"};
  // As transformers renders the real template (date_string passed).
  EXPECT_EQ(t.apply(m, opt),
            R"(<|begin_of_text|><|start_header_id|>system<|end_header_id|>

Environment: ipython
Cutting Knowledge Date: December 2023
Today Date: 05 Dec 2026

Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.

{
    "type": "function",
    "function": {
        "name": "ping",
        "parameters": {
            "type": "object",
            "properties": {
                "n": {
                    "type": "integer"
                }
            },
            "required": []
        }
    }
}

Up?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

{"name": "ping", "parameters": {"n": 1}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>

"pong"<|eot_id|><|start_header_id|>assistant<|end_header_id|>

)");
  // Without tools and a date: the template's default date, no tool section.
  const std::vector<ChatMessage> plain = {msg("user", " Hi ")};
  EXPECT_EQ(t.apply(plain),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge "
            "Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|"
            "end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(Llama31Chat, RefusesWhatTheTemplateRefuses) {
  const auto t = ChatTemplate::detect(kLongTemplate, "", "");
  const std::vector<ChatMessage> two = {msg("user", "x"),
                                        msg("assistant", "", {{"a", "{}"}, {"b", "{}"}})};
  expect_code([&] { (void)t.apply(two); }, ErrorCode::kInvalidArgument, "tool_calls");
  ChatOptions tools;
  tools.tools = {R"({"type": "function", "function": {"name": "a"}})"};
  const std::vector<ChatMessage> system_only = {msg("system", "s")};
  expect_code([&] { (void)t.apply(system_only, tools); }, ErrorCode::kInvalidArgument, "messages");
  const std::vector<ChatMessage> robot = {msg("robot", "x")};
  expect_code([&] { (void)t.apply(robot); }, ErrorCode::kInvalidArgument, "role");
  ChatOptions thinking;
  thinking.enable_thinking = true;
  const std::vector<ChatMessage> one = {msg("user", "x")};
  expect_code([&] { (void)t.apply(one, thinking); }, ErrorCode::kUnsupported, "enable_thinking");
  // Llama 3.1's own option, refused by the other families.
  ChatOptions in_system;
  in_system.tools_in_user_message = false;
  for (const ChatFormat f : {ChatFormat::kChatML, ChatFormat::kQwen3, ChatFormat::kHarmony}) {
    expect_code([&] { (void)ChatTemplate::of_format(f, "", "").apply(one, in_system); },
                ErrorCode::kUnsupported, "tools_in_user_message");
  }
  ChatOptions builtin;
  builtin.builtin_tools = std::vector<std::string>{"brave_search"};
  for (const ChatFormat f : {ChatFormat::kChatML, ChatFormat::kQwen3, ChatFormat::kHarmony,
                             ChatFormat::kLlama3, ChatFormat::kGemma}) {
    expect_code([&] { (void)ChatTemplate::of_format(f, "", "").apply(one, builtin); },
                ErrorCode::kUnsupported, "builtin_tools");
  }
}

// A template with builtin tools (3.1, 3.3): the Tools line, the python_tag
// call with string arguments, end-of-message after a call; a number as an
// argument is refused. Without the builtin markers (3.2) the option changes
// nothing, as transformers passes it to a template that does not read it.
TEST(Llama31Chat, BuiltinTools) {
  const std::string with_builtin =
      std::string(kLongTemplate) + "{%- if builtin_tools is defined %}<|python_tag|>{%- endif %}";
  const ChatTemplate t = ChatTemplate::detect(with_builtin, "<s>", "<|eot_id|>");
  const ChatTemplate plain = ChatTemplate::detect(kLongTemplate, "<s>", "<|eot_id|>");
  ChatOptions opt;
  opt.builtin_tools = std::vector<std::string>{"code_interpreter", "brave_search", "wolfram_alpha"};
  opt.add_generation_prompt = false;
  const std::vector<ChatMessage> call = {
      msg("user", "q"),
      msg("assistant", "", {{"brave_search", R"({"query": "a \"b\"", "n": "2"})"}})};
  const std::string out = t.apply(call, opt);
  EXPECT_NE(out.find("Environment: ipython\nTools: brave_search, wolfram_alpha\n\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<|python_tag|>brave_search.call(query=\"a \"b\"\", n=\"2\")<|eom_id|>"),
            std::string::npos)
      << out;
  const std::string ignored = plain.apply(call, opt);
  EXPECT_EQ(ignored.find("Tools:"), std::string::npos) << ignored;
  EXPECT_NE(ignored.find(R"({"name": "brave_search", "parameters": )"), std::string::npos);
  const std::vector<ChatMessage> number = {
      msg("user", "q"), msg("assistant", "", {{"wolfram_alpha", R"({"query": 2})"}})};
  expect_code([&] { (void)t.apply(number, opt); }, ErrorCode::kInvalidArgument, "tool_calls");
  const std::vector<ChatMessage> not_object = {msg("user", "q"),
                                               msg("assistant", "", {{"wolfram_alpha", "[1]"}})};
  expect_code([&] { (void)t.apply(not_object, opt); }, ErrorCode::kInvalidArgument, "tool_calls");
}

// --- the text-or-call constraint ------------------------------------------------

constexpr const char* kCall = R"({"anyOf": [
  {"type": "object", "properties": {"name": {"const": "get_weather"},
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"], "additionalProperties": false}},
   "required": ["name", "parameters"], "additionalProperties": false},
  {"type": "object", "properties": {"name": {"const": "ping"},
   "parameters": {"type": "object", "additionalProperties": false}},
   "required": ["name", "parameters"], "additionalProperties": false}]})";

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The language, judged on a whole token sequence: past blank tokens and one
// marker token, a special token or a first non-blank byte other than '{'
// makes it text (anything may follow); '{' makes it one JSON value, no
// special token inside; all blank is (empty) text.
struct Reference {
  const nextok::Vocabulary& vocab;
  std::shared_ptr<const JsonGrammar> json;
  std::optional<uint32_t> marker;

  // Viable (`whole` false) or complete (`whole` true).
  bool operator()(const std::vector<uint32_t>& ids, bool whole) const {
    std::string value;  // the bytes the JSON side reads
    bool marker_seen = false, decided_value = false;
    for (const uint32_t id : ids) {
      const std::string_view b = vocab.bytes(id);
      if (decided_value) {
        if (vocab.is_special(id)) return false;
        value += b;
        continue;
      }
      if (marker && id == *marker && !marker_seen) {
        marker_seen = true;
        continue;
      }
      size_t lead = 0;
      while (lead < b.size() && is_ws(b[lead])) ++lead;
      if (vocab.is_special(id) || (lead < b.size() && b[lead] != '{')) return true;  // text
      value += b;
      decided_value = lead < b.size();
    }
    if (!decided_value) return true;  // blank: (empty) text so far
    JsonConstraint probe(json);
    return whole ? probe.completes_with(value) : probe.accepts_bytes(value);
  }
};

std::shared_ptr<const nextok::Vocabulary> fragment_vocab() {
  std::vector<std::string> toks = {"{",
                                   "}",
                                   "{\"",
                                   "\"name\"",
                                   "\": \"",
                                   "get_weather",
                                   "ping",
                                   "\", ",
                                   "\"parameters\"",
                                   ": {",
                                   "\"city\"",
                                   "\"Paris\"",
                                   "}}",
                                   "}}\n",
                                   " {",
                                   "\n{\"",
                                   " ",
                                   "  ",
                                   "\n",
                                   "\t",
                                   "Hello",
                                   " world",
                                   "Sure {",
                                   "\"",
                                   ":",
                                   ",",
                                   "a",
                                   "<|python_tag|>",
                                   "<|eot_id|>"};
  for (char c = ' '; c <= '~'; ++c)
    if (std::find(toks.begin(), toks.end(), std::string(1, c)) == toks.end())
      toks.emplace_back(1, c);
  const auto find = [&](std::string_view s) {
    return static_cast<uint32_t>(std::find(toks.begin(), toks.end(), s) - toks.begin());
  };
  const std::vector<uint32_t> eos = {find("<|eot_id|>")};
  const std::vector<uint32_t> special = {find("<|python_tag|>"), find("<|eot_id|>")};
  return nextok::Vocabulary::from_token_bytes(toks, eos, special);
}

std::vector<uint32_t> probe_ids(const nextok::Vocabulary& vocab) {
  std::vector<uint32_t> ids;
  std::mt19937 rng(7);
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view b = vocab.bytes(id);
    const bool interesting = vocab.is_special(id) || vocab.is_eos(id) ||
                             b.find_first_of("{}\" \n") != std::string_view::npos;
    if (vocab.size() < 1000 || interesting || rng() % 400 == 0) ids.push_back(id);
  }
  return ids;
}

// Seeded random walks; every probed mask bit equals the reference's
// verdict. Walks lean towards '{' at the start so both sides are reached;
// a rollback and a clone bring the earlier mask back.
void check_walks(std::shared_ptr<const TokenIndex> index, int walks, int steps, size_t max_probes) {
  const auto& vocab = index->vocab();
  auto json = JsonGrammar::from_schema(index, kCall);
  auto g = JsonOrTextGrammar::build(index, json, "<|python_tag|>");
  Reference ref{vocab, json, g->marker()};
  std::vector<uint32_t> probes = probe_ids(vocab);
  std::mt19937 rng(4321);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab.size()));
  int value_walks = 0, text_walks = 0;
  for (int w = 0; w < walks; ++w) {
    JsonOrTextConstraint c(g);
    std::vector<uint32_t> ids;
    std::vector<std::vector<uint32_t>> masks;
    for (int s = 0; s < steps && !c.finished(); ++s) {
      c.step_mask(mask);
      masks.push_back(mask);
      std::shuffle(probes.begin(), probes.end(), rng);
      for (size_t k = 0; k < probes.size() && k < max_probes; ++k) {
        const uint32_t id = probes[k];
        std::vector<uint32_t> next = ids;
        next.push_back(id);
        const bool want = vocab.is_eos(id) ? ref(ids, true) : ref(next, false);
        ASSERT_EQ(nextok::bitmask_allows(mask, id), want)
            << "walk " << w << " step " << s << " token '" << vocab.bytes(id) << "'";
      }
      std::vector<uint32_t> allowed;
      for (uint32_t id = 0; id < vocab.size(); ++id)
        if (nextok::bitmask_allows(mask, id)) allowed.push_back(id);
      ASSERT_FALSE(allowed.empty());
      uint32_t pick = allowed[rng() % allowed.size()];
      if (s == 0 && w % 2 == 0) {
        for (const uint32_t id : allowed) {
          const std::string_view b = vocab.bytes(id);
          const size_t lead = b.find_first_not_of(" \t\n\r");
          if (!vocab.is_special(id) && lead != std::string_view::npos && b[lead] == '{') pick = id;
        }
      }
      if (vocab.is_eos(pick) && s < steps / 2 && allowed.size() > 1) pick = allowed.front();
      c.advance(pick);
      ids.push_back(pick);
    }
    (c.mode() == JsonOrTextConstraint::Mode::kValue ? value_walks : text_walks)++;
    if (ids.size() > 2) {
      const size_t back = 1 + rng() % (ids.size() - 1);
      auto copy = c.clone();
      c.rollback(back);
      c.step_mask(mask);
      EXPECT_EQ(mask, masks[ids.size() - back]) << "rollback " << back;
      c.reset();
      c.step_mask(mask);
      EXPECT_EQ(mask, masks[0]);
      ASSERT_TRUE(copy->finished() || copy->can_continue() || copy->is_complete());
    }
  }
  EXPECT_GT(value_walks, 0);
  EXPECT_GT(text_walks, 0);
}

TEST(JsonOrText, MasksMatchTheReferenceOnFragments) {
  auto index = TokenIndex::build(fragment_vocab());
  check_walks(index, 60, 40, 1000);
}

TEST(JsonOrText, MasksMatchTheReferenceOnLlama31) {
  SCHEMA_TEST_NEEDS_LLAMA();
  check_walks(schema_test::llama_index(), 8, 30, 400);
}

TEST(JsonOrText, DecidesOnTheFirstNonBlankByte) {
  auto index = TokenIndex::build(fragment_vocab());
  const auto& vocab = index->vocab();
  auto g =
      JsonOrTextGrammar::build(index, JsonGrammar::from_schema(index, kCall), "<|python_tag|>");
  auto id = [&](std::string_view s) {
    for (uint32_t i = 0; i < vocab.size(); ++i)
      if (vocab.bytes(i) == s) return i;
    throw std::runtime_error("no token");
  };
  JsonOrTextConstraint c(g);
  c.advance(id("\n"));
  c.advance(id("<|python_tag|>"));
  EXPECT_EQ(c.mode(), JsonOrTextConstraint::Mode::kUndecided);
  c.advance(id(" {"));
  EXPECT_EQ(c.mode(), JsonOrTextConstraint::Mode::kValue);
  // Inside the value the call's schema holds: a wrong key is refused.
  expect_code([&] { c.advance(id("Hello")); }, ErrorCode::kInvalidArgument, "token");
  expect_code([&] { c.advance(id("<|eot_id|>")); }, ErrorCode::kInvalidArgument, "token");
  for (const char* t :
       {"\"name\"", ":", " ", "\"", "ping", "\"", ",", " ", "\"parameters\"", ": {", "}}"})
    c.advance(id(t));
  EXPECT_TRUE(c.is_complete());
  c.advance(id("<|eot_id|>"));
  EXPECT_TRUE(c.finished());
  JsonOrTextConstraint text(g);
  text.advance(id("Sure {"));
  EXPECT_EQ(text.mode(), JsonOrTextConstraint::Mode::kText);
  EXPECT_TRUE(text.is_complete());
  // Past the JSON grammar's whitespace limit (20) a value can no longer
  // open, but text still can.
  JsonOrTextConstraint blank(g);
  for (int i = 0; i < 11; ++i) blank.advance(id("  "));
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab.size()));
  blank.step_mask(mask);
  EXPECT_FALSE(nextok::bitmask_allows(mask, id("{")));
  EXPECT_FALSE(nextok::bitmask_allows(mask, id(" {")));
  EXPECT_TRUE(nextok::bitmask_allows(mask, id("Hello")));
  EXPECT_TRUE(nextok::bitmask_allows(mask, id("\n")));
  EXPECT_TRUE(nextok::bitmask_allows(mask, id("<|eot_id|>")));
  expect_code([&] { blank.advance(id("{")); }, ErrorCode::kInvalidArgument, "token");
  blank.rollback(2);
  blank.step_mask(mask);
  EXPECT_TRUE(nextok::bitmask_allows(mask, id(" {")));
  // A second marker is text.
  JsonOrTextConstraint twice(g);
  twice.advance(id("<|python_tag|>"));
  twice.advance(id("<|python_tag|>"));
  EXPECT_EQ(twice.mode(), JsonOrTextConstraint::Mode::kText);
}

// --- the server's reading of a turn -----------------------------------------

TEST(Llama31Server, ReadsABareCallOrText) {
  using nextok::server::parse_tool_output;
  using nextok::server::ToolFormat;
  constexpr auto L = ToolFormat::kLlamaJson;
  auto p = parse_tool_output("\n {\"name\": \"f\", \"parameters\": {\"a\": [1, \"}\"]}} \n", L);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "f");
  EXPECT_EQ(p.calls[0].arguments, R"({"a": [1, "}"]})");
  EXPECT_FALSE(p.content.has_value());
  p = parse_tool_output("<|python_tag|>{\"name\": \"g\", \"arguments\": {}}", L);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "g");
  for (const char* text :
       {"It is sunny.", "{\"name\": \"f\", \"param", "{\"name\": 1, \"parameters\": {}}",
        "{\"name\": \"f\", \"parameters\": {}} and more", ""}) {
    p = parse_tool_output(text, L);
    EXPECT_TRUE(p.calls.empty()) << text;
    EXPECT_EQ(p.content, text);
  }
  // Hermes tags mean nothing to this format.
  p = parse_tool_output("<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", L);
  EXPECT_TRUE(p.calls.empty());
}

TEST(Llama31Server, StreamsTextOnceItCannotBeACall) {
  using nextok::server::tool_text_safe_end;
  using nextok::server::ToolFormat;
  constexpr auto L = ToolFormat::kLlamaJson;
  EXPECT_EQ(tool_text_safe_end("", L), 0u);
  EXPECT_EQ(tool_text_safe_end(" \n", L), 0u);
  EXPECT_EQ(tool_text_safe_end(" {\"na", L), 0u);
  EXPECT_EQ(tool_text_safe_end("<|pyth", L), 0u);
  EXPECT_EQ(tool_text_safe_end("<|python_tag|> ", L), 0u);
  EXPECT_EQ(tool_text_safe_end("<|python_tag|>{", L), 0u);
  EXPECT_EQ(tool_text_safe_end(" Hello {", L), 8u);
  EXPECT_EQ(tool_text_safe_end("<|python_tag|>print(1)", L), 22u);
  // Hermes as before: up to the tag, or a tail that may begin one.
  EXPECT_EQ(tool_text_safe_end("Hi <tool_call>", ToolFormat::kHermes), 3u);
  EXPECT_EQ(tool_text_safe_end("Hi <tool", ToolFormat::kHermes), 3u);
}

TEST(Llama31Server, CallSchemaUsesParameters) {
  nextok::server::ToolRequest r;
  r.tools.push_back({"f", R"({"type": "object"})", false, ""});
  r.format = nextok::server::ToolFormat::kLlamaJson;
  const std::string s = r.call_schema();
  EXPECT_NE(s.find(R"("parameters": {"type": "object"})"), std::string::npos) << s;
  EXPECT_NE(s.find(R"("required": ["name", "parameters"])"), std::string::npos) << s;
  EXPECT_EQ(s.find("arguments"), std::string::npos) << s;
  r.format = nextok::server::ToolFormat::kHermes;
  EXPECT_NE(r.call_schema().find(R"("required": ["name", "arguments"])"), std::string::npos);
}

}  // namespace
