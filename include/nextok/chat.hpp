// Chat formatting: messages → the prompt string a model was trained on,
// byte-for-byte equal to HF transformers' apply_chat_template for the
// families below. Hand-written per family (no Jinja engine); a template is
// mapped to a family by recognising its source. See docs/chat.md.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextok {

// A call an assistant turn made; arguments are JSON text, kept verbatim.
struct ChatToolCall {
  std::string name;
  std::string arguments;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
  // Qwen3: the assistant's thinking; other families ignore it, as their templates do.
  std::optional<std::string> reasoning_content;
  std::vector<ChatToolCall> tool_calls;  // assistant turns
};

struct ChatOptions {
  bool add_generation_prompt = true;
  // Qwen3 only: false appends an empty think block to the generation prompt.
  // Unset means "not passed to the template" (not the same as true).
  std::optional<bool> enable_thinking;
  // The tools offered, each one JSON text as transformers' `tojson` writes it
  // (Python json.dumps: ", " and ": ", keys in their order). Qwen3 and ChatML
  // render them Hermes-style (docs/tool-calls.md); other families refuse.
  std::vector<std::string> tools;
  // gpt-oss harmony only: the system message's "Reasoning:" (unset: "medium").
  std::optional<std::string> reasoning_effort;
  // Harmony's "Current date:" (unset: today's local date, as the template's
  // strftime_now) and the long Llama 3.1 template's date_string, its "Today
  // Date:" (unset: the template's default, "26 Jul 2024" for 3.1 and 3.3,
  // today's "%d %b %Y" for 3.2).
  std::optional<std::string> current_date;
  // The long Llama 3.1 template's tools_in_user_message: false puts the
  // tools in the system turn instead of the first user message. Unset means
  // the template's default (true); other families refuse it.
  std::optional<bool> tools_in_user_message;
  // The long Llama 3.1 template's builtin_tools (brave_search, wolfram_alpha,
  // code_interpreter). Unset means not passed. The 3.1 and 3.3 templates then
  // write "Environment: ipython" and a "Tools:" line (code_interpreter left
  // out of it), a call to one of them as `<|python_tag|>name.call(arg="value",
  // …)` (string values only, as the template concatenates them), and end
  // every call turn with <|eom_id|>; 3.2's template does not read it, and
  // renders as without it, as transformers does. Other families refuse it.
  std::optional<std::vector<std::string>> builtin_tools;
};

// kLlama3 is the short Llama 3 template; kLlama31 the long one (date header,
// JSON tool calls) that Llama 3.1, 3.2 and 3.3 ship.
enum class ChatFormat { kChatML, kQwen3, kLlama3, kGemma, kHarmony, kLlama31 };

const char* chat_format_name(ChatFormat format) noexcept;
// Whether the family renders tools and tool turns (Hermes-style <tool_call>,
// harmony calls, Llama 3.1's bare JSON calls).
bool chat_format_has_tools(ChatFormat format) noexcept;

class ChatTemplate {
 public:
  // Recognises the family of a Jinja chat-template source; a template we do
  // not support is a kUnsupported error that names the supported families.
  static ChatTemplate detect(std::string_view jinja_source, std::string bos_token,
                             std::string eos_token);
  // kChatML here is SmolLM2's: a default system prompt when none is given.
  static ChatTemplate of_format(ChatFormat format, std::string bos_token, std::string eos_token);

  ChatFormat format() const noexcept { return format_; }
  const std::string& bos_token() const noexcept { return bos_token_; }
  const std::string& eos_token() const noexcept { return eos_token_; }
  // ChatML: the system turn inserted when the first message is not a system
  // one (taken from the template); nullopt inserts none.
  const std::optional<std::string>& default_system_prompt() const noexcept {
    return default_system_;
  }

  // Throws kInvalidArgument for an empty conversation, an unknown role or a
  // role order the template rejects; kUnsupported for tools, tool messages
  // or enable_thinking on a family without them.
  std::string apply(std::span<const ChatMessage> messages, const ChatOptions& opt = {}) const;

 private:
  ChatTemplate(ChatFormat format, std::string bos, std::string eos,
               std::optional<std::string> default_system, bool date_from_clock = false,
               bool reads_builtin_tools = false)
      : format_(format),
        bos_token_(std::move(bos)),
        eos_token_(std::move(eos)),
        default_system_(std::move(default_system)),
        date_from_clock_(date_from_clock),
        reads_builtin_tools_(reads_builtin_tools) {}

  ChatFormat format_;
  std::string bos_token_;
  std::string eos_token_;
  std::optional<std::string> default_system_;
  // kLlama31: the template's default date is today's (Llama 3.2's
  // strftime_now) rather than a fixed one.
  bool date_from_clock_ = false;
  // kLlama31: the template reads builtin_tools (3.1 and 3.3; not 3.2).
  bool reads_builtin_tools_ = false;
};

}  // namespace nextok
