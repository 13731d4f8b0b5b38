// Chat formatting: exact layouts per family, detection, and errors. The
// byte-for-byte comparison with transformers is tests/python/test_chat_template.py.
#include <gtest/gtest.h>

#include <vector>

#include "chat/formats.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"

using namespace nextok;

namespace {

template <typename F>
void expect_code(F&& f, ErrorCode code, const char* param) {
  try {
    f();
    FAIL() << "expected " << error_code_name(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.param(), param) << e.what();
  }
}

ChatMessage msg(std::string role, std::string content,
                std::optional<std::string> reasoning = std::nullopt) {
  return ChatMessage{std::move(role), std::move(content), std::move(reasoning), {}};
}

// Options by assignment: designated initializers would have to name every
// field (-Wmissing-field-initializers) and break as ChatOptions grows.
ChatOptions options(bool generation_prompt, std::optional<bool> thinking,
                    std::vector<std::string> tools = {}) {
  ChatOptions o;
  o.add_generation_prompt = generation_prompt;
  o.enable_thinking = thinking;
  o.tools = std::move(tools);
  return o;
}

const ChatOptions kNoGen = options(false, std::nullopt);

const ChatTemplate& qwen3() {
  static const ChatTemplate t = ChatTemplate::of_format(ChatFormat::kQwen3, "", "<|im_end|>");
  return t;
}

}  // namespace

TEST(ChatFormat, Names) {
  EXPECT_STREQ(chat_format_name(ChatFormat::kChatML), "chatml");
  EXPECT_STREQ(chat_format_name(ChatFormat::kQwen3), "qwen3");
  EXPECT_STREQ(chat_format_name(ChatFormat::kLlama3), "llama3");
  EXPECT_STREQ(chat_format_name(ChatFormat::kGemma), "gemma");
}

TEST(ChatML, DefaultSystemPromptAndVerbatimContent) {
  const auto t = ChatTemplate::of_format(ChatFormat::kChatML, "<|im_start|>", "<|im_end|>");
  const std::vector<ChatMessage> m = {msg("user", " Hi\n"), msg("assistant", "Hello!"),
                                      msg("user", "Bye")};
  EXPECT_EQ(t.apply(m),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n"
            "<|im_start|>user\n Hi\n<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n"
            "<|im_start|>user\nBye<|im_end|>\n"
            "<|im_start|>assistant\n");
  const std::vector<ChatMessage> s = {msg("system", "Be brief."), msg("user", "Hi")};
  EXPECT_EQ(t.apply(s, kNoGen),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatML, DetectTakesTheDefaultSystemFromTheTemplate) {
  const std::string with_default =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
      "{{ '<|im_start|>system\nYou are Tiny.<|im_end|>\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
  const auto t = ChatTemplate::detect(with_default, "", "<|im_end|>");
  EXPECT_EQ(t.format(), ChatFormat::kChatML);
  EXPECT_EQ(t.default_system_prompt(), "You are Tiny.");
  const std::string plain =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
  const auto p = ChatTemplate::detect(plain, "", "");
  EXPECT_EQ(p.format(), ChatFormat::kChatML);
  EXPECT_FALSE(p.default_system_prompt().has_value());
  const std::vector<ChatMessage> m = {msg("user", "Hi")};
  EXPECT_EQ(p.apply(m), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatQwen3, SingleTurnAndThinkingSwitch) {
  const std::vector<ChatMessage> m = {msg("system", "S"), msg("user", "Hi")};
  const std::string base = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";
  EXPECT_EQ(qwen3().apply(m), base + "<|im_start|>assistant\n");
  EXPECT_EQ(qwen3().apply(m, options(true, true)), base + "<|im_start|>assistant\n");
  EXPECT_EQ(qwen3().apply(m, options(true, false)),
            base + "<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(qwen3().apply(m, options(false, false)), base);
}

TEST(ChatQwen3, HistoryDropsEarlierReasoning) {
  const std::vector<ChatMessage> m = {msg("user", "Q1"),
                                      msg("assistant", "<think>\nr1\n</think>\n\nA1"),
                                      msg("user", "Q2"), msg("assistant", "A2", "r2\n")};
  EXPECT_EQ(qwen3().apply(m, kNoGen),
            "<|im_start|>user\nQ1<|im_end|>\n"
            "<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nQ2<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nr2\n</think>\n\nA2<|im_end|>\n");
}

TEST(ChatQwen3, LastAssistantAlwaysGetsAThinkBlock) {
  const std::vector<ChatMessage> m = {msg("user", "Q"), msg("assistant", "\nA")};
  EXPECT_EQ(
      qwen3().apply(m, kNoGen),
      "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nA<|im_end|>\n");
}

TEST(ChatLlama3, ShortTemplateLayout) {
  const auto t = ChatTemplate::of_format(ChatFormat::kLlama3, "<|begin_of_text|>", "<|eot_id|>");
  const std::vector<ChatMessage> m = {msg("system", " S \n"), msg("user", "Hi\u3000")};
  EXPECT_EQ(t.apply(m),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatGemma, SystemMergedIntoFirstUserTurn) {
  const auto t = ChatTemplate::of_format(ChatFormat::kGemma, "<bos>", "<end_of_turn>");
  const std::vector<ChatMessage> m = {msg("system", "S "), msg("user", " Hi "),
                                      msg("assistant", "Yo"), msg("user", "Bye")};
  EXPECT_EQ(t.apply(m),
            "<bos><start_of_turn>user\nS \n\nHi<end_of_turn>\n"
            "<start_of_turn>model\nYo<end_of_turn>\n"
            "<start_of_turn>user\nBye<end_of_turn>\n"
            "<start_of_turn>model\n");
}

TEST(ChatGemma, RolesMustAlternate) {
  const auto t = ChatTemplate::of_format(ChatFormat::kGemma, "<bos>", "<end_of_turn>");
  const std::vector<ChatMessage> twice = {msg("user", "a"), msg("user", "b")};
  expect_code([&] { (void)t.apply(twice); }, ErrorCode::kInvalidArgument, "role");
  const std::vector<ChatMessage> starts = {msg("assistant", "a")};
  expect_code([&] { (void)t.apply(starts); }, ErrorCode::kInvalidArgument, "role");
}

TEST(ChatDetect, RecognisesFamiliesByMarkers) {
  EXPECT_EQ(ChatTemplate::detect("{{ '<|im_start|>' }}{% if enable_thinking %}<think>{% endif %}"
                                 "{{ reasoning_content }}{{ ns.last_query_index }}",
                                 "", "")
                .format(),
            ChatFormat::kQwen3);
  EXPECT_EQ(ChatTemplate::detect("{{ bos_token + '<|start_header_id|>' + m + '<|end_header_id|>"
                                 "\n\n' + c | trim + '<|eot_id|>' }}",
                                 "", "")
                .format(),
            ChatFormat::kLlama3);
  EXPECT_EQ(ChatTemplate::detect("{{ bos_token }}{% set first_user_prefix = '' %}"
                                 "{{ '<start_of_turn>' }}{{ '<end_of_turn>' }}",
                                 "", "")
                .format(),
            ChatFormat::kGemma);
}

TEST(ChatDetect, UnsupportedTemplatesNameTheSupportedFamilies) {
  for (const char* src :
       {"{{ '[INST] ' + message['content'] + ' [/INST]' }}",
        "{{ '<|start_header_id|>' }}<|end_header_id|><|eot_id|>Cutting Knowledge Date",
        "{{ '<start_of_turn>' }}<end_of_turn>{{ raise_exception('System role not supported') }}",
        "{{ '<|im_start|>' }}{% if tools %}{{ tools | tojson }}{% endif %}", ""}) {
    try {
      (void)ChatTemplate::detect(src, "", "");
      FAIL() << "expected kUnsupported for: " << src;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
      EXPECT_EQ(e.param(), "chat_template");
      EXPECT_NE(std::string(e.what()).find("Qwen3"), std::string::npos) << e.what();
    }
  }
}

TEST(ChatErrors, BadMessages) {
  const std::vector<ChatMessage> none;
  expect_code([&] { (void)qwen3().apply(none); }, ErrorCode::kInvalidArgument, "messages");
  const std::vector<ChatMessage> unknown = {msg("user", "a"), msg("robot", "b")};
  expect_code([&] { (void)qwen3().apply(unknown); }, ErrorCode::kInvalidArgument, "role");
  const std::vector<ChatMessage> tool = {msg("user", "a"), msg("tool", "42")};
  const auto llama = ChatTemplate::of_format(ChatFormat::kLlama3, "<|begin_of_text|>", "");
  expect_code([&] { (void)llama.apply(tool); }, ErrorCode::kUnsupported, "role");
  EXPECT_NO_THROW((void)qwen3().apply(tool));  // Qwen3 renders tool results
  const std::vector<ChatMessage> ok = {msg("user", "a")};
  expect_code(
      [&] { (void)llama.apply(ok, options(true, std::nullopt, {R"({"type": "function"})"})); },
      ErrorCode::kUnsupported, "tools");
  expect_code([&] { (void)llama.apply(ok, options(true, false)); },
              ErrorCode::kUnsupported, "enable_thinking");
}

TEST(ChatText, PythonStripIsUnicodeAware) {
  using chat_detail::py_strip;
  EXPECT_EQ(py_strip(" \t\na b\r\n"), "a b");
  EXPECT_EQ(py_strip("\u3000\u00a0x\u2028\u0085"), "x");
  EXPECT_EQ(py_strip("\x1c\x1fx"), "x");
  EXPECT_EQ(py_strip("\u200bx"), "\u200bx");  // zero-width space is not whitespace
  EXPECT_EQ(py_strip("  "), "");
  EXPECT_EQ(py_strip("\xff "), "\xff");  // invalid UTF-8 stops stripping, never crashes
  EXPECT_EQ(chat_detail::strip_newlines("\n\na\n"), "a");
}
