// gpt-oss harmony, as its chat template renders it: a system message
// (identity, knowledge cutoff, current date, reasoning effort, channels), a
// developer message (the first system/developer message as "# Instructions",
// the tools as "# Tools"), then the turns. Past reasoning is dropped except
// for a tool-calling turn that no later final answer supersedes; a call is
// written with its recipient in the role header; a tool result is the JSON
// string of its content, from the last call's function.
#include <ctime>

#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok::chat_detail {
namespace {

constexpr std::string_view kAnalysisTag = "<|channel|>analysis<|message|>";
constexpr std::string_view kFinalTag = "<|channel|>final<|message|>";

// The template's strftime_now("%Y-%m-%d"): the local date now.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &local);
  return buf;
}

void check_harmony_messages(std::span<const ChatMessage> messages, const ChatOptions& opt) {
  if (messages.empty())
    throw Error(ErrorCode::kInvalidArgument, "messages", "the conversation has no messages");
  if (opt.enable_thinking)
    throw Error(ErrorCode::kUnsupported, "enable_thinking",
                "enable_thinking is a Qwen3 option; gpt-oss takes reasoning_effort");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role == "system" || role == "developer" || role == "user" || role == "assistant" ||
        role == "tool")
      continue;
    throw Error(ErrorCode::kInvalidArgument, "role",
                "message " + std::to_string(i) + ": unknown role \"" + role +
                    "\" (expected system, developer, user, assistant or tool)");
  }
}

// The template refuses channel markup inside text fields.
void check_no_channels(const std::string& text, size_t i, const char* field) {
  if (text.find(kAnalysisTag) != std::string::npos || text.find(kFinalTag) != std::string::npos)
    throw Error(ErrorCode::kInvalidArgument, field,
                "message " + std::to_string(i) + ": the " + field +
                    " holds <|channel|> tags; pass reasoning as reasoning_content and the "
                    "answer as content");
}

std::string system_message(const ChatOptions& opt) {
  std::string out =
      "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
      "Knowledge cutoff: 2024-06\nCurrent date: ";
  out += opt.current_date ? *opt.current_date : today();
  out += "\n\nReasoning: ";
  out += opt.reasoning_effort ? *opt.reasoning_effort : "medium";
  out +=
      "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every "
      "message.";
  if (!opt.tools.empty())
    out += "\nCalls to these tools must go to the commentary channel: 'functions'.";
  return out + "<|end|>";
}

}  // namespace

std::string render_harmony(std::span<const ChatMessage> messages, const ChatOptions& opt) {
  check_harmony_messages(messages, opt);
  std::string out = system_message(opt);
  size_t first = 0;
  std::string developer;
  if (messages[0].role == "system" || messages[0].role == "developer") {
    developer = messages[0].content;
    first = 1;
  }
  if (!developer.empty() || !opt.tools.empty()) {
    out += "<|start|>developer<|message|>";
    if (!developer.empty()) out += "# Instructions\n\n" + developer + "\n\n";
    if (!opt.tools.empty()) out += "# Tools\n\n" + harmony_tools_namespace(opt.tools);
    out += "<|end|>";
  }
  std::optional<std::string> last_call;  // the function a tool result answers
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool last = i + 1 == messages.size();
    if (m.role == "assistant") {
      check_no_channels(m.content, i, "content");
      if (m.reasoning_content) check_no_channels(*m.reasoning_content, i, "reasoning_content");
      const std::string thinking = m.reasoning_content.value_or("");
      if (!m.tool_calls.empty()) {
        // Reasoning before a call stays until a later final answer.
        bool final_later = false;
        for (size_t k = i + 1; k < messages.size(); ++k)
          final_later |= messages[k].role == "assistant" && messages[k].tool_calls.empty();
        if (!m.content.empty() && !thinking.empty())
          throw Error(ErrorCode::kInvalidArgument, "content",
                      "message " + std::to_string(i) +
                          ": an assistant message with tool calls has both content and "
                          "reasoning; the gpt-oss template takes one of them");
        const std::string& analysis = m.content.empty() ? thinking : m.content;
        if (!analysis.empty() && !final_later)
          out += "<|start|>assistant<|channel|>analysis<|message|>" + analysis + "<|end|>";
        // One call per message: the template renders the first.
        const ChatToolCall& call = m.tool_calls.front();
        out += "<|start|>assistant to=functions." + call.name +
               "<|channel|>commentary json<|message|>";
        out += call.arguments;
        out += "<|call|>";
        last_call = call.name;
      } else if (last && !opt.add_generation_prompt) {
        if (m.reasoning_content)
          out += "<|start|>assistant<|channel|>analysis<|message|>" + thinking + "<|end|>";
        out += "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|return|>";
      } else {
        out += "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|end|>";
        last_call.reset();
      }
    } else if (m.role == "tool") {
      if (!last_call)
        throw Error(ErrorCode::kInvalidArgument, "role",
                    "message " + std::to_string(i) +
                        ": a tool message without an earlier assistant tool call");
      out += "<|start|>functions." + *last_call + " to=assistant<|channel|>commentary<|message|>";
      out += python_json_string(m.content);
      out += "<|end|>";
    } else if (m.role == "user") {
      out += "<|start|>user<|message|>" + m.content + "<|end|>";
    }
    // A later system or developer message is not rendered, as in the template.
  }
  if (opt.add_generation_prompt) out += "<|start|>assistant";
  return out;
}

}  // namespace nextok::chat_detail
