// Qwen3, with tools in its Hermes form (hermes_tools.cpp). The template shows thinking only for
// assistant turns after the last real user query (the current agent step); earlier turns keep just
// their answer. Reasoning comes from reasoning_content or, failing that, from a <think>…</think>
// block inside the content.
#include "chat/formats.hpp"

namespace nextok::chat_detail {
namespace {

bool is_tool_response(std::string_view s) {
  constexpr std::string_view kOpen = "<tool_response>", kClose = "</tool_response>";
  return s.starts_with(kOpen) && s.ends_with(kClose);
}

}  // namespace

std::string render_qwen3(std::span<const ChatMessage> messages, const ChatOptions& opt) {
  std::string out;
  const bool system_first = messages.front().role == "system";
  if (!opt.tools.empty()) {
    out += hermes_tools_system(
        system_first ? std::optional<std::string_view>(messages.front().content) : std::nullopt,
        opt.tools);
  } else if (system_first) {
    out += "<|im_start|>system\n" + messages.front().content + "<|im_end|>\n";
  }
  // Index of the last user message that is not a wrapped tool response.
  std::size_t last_query_index = messages.size() - 1;
  for (std::size_t k = messages.size(); k-- > 0;) {
    if (messages[k].role == "user" && !is_tool_response(messages[k].content)) {
      last_query_index = k;
      break;
    }
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool last = i + 1 == messages.size();
    if (m.role == "user" || (m.role == "system" && i != 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      std::string_view content = m.content;
      std::string_view reasoning;
      if (m.reasoning_content) {
        reasoning = *m.reasoning_content;
      } else if (const auto close = content.find("</think>"); close != std::string_view::npos) {
        // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
        std::string_view before = rstrip_newlines(content.substr(0, close));
        if (const auto open = before.rfind("<think>"); open != std::string_view::npos) {
          before = before.substr(open + 7);
        }
        reasoning = lstrip_newlines(before);
        // content.split('</think>')[-1].lstrip('\n')
        content = lstrip_newlines(content.substr(content.rfind("</think>") + 8));
      }
      if (i > last_query_index && (last || !reasoning.empty())) {
        out += "<|im_start|>assistant\n<think>\n";
        out += strip_newlines(reasoning);
        out += "\n</think>\n\n";
        out += lstrip_newlines(content);
      } else {
        out += "<|im_start|>assistant\n";
        out += content;
      }
      append_hermes_calls(out, m, content);
      out += "<|im_end|>\n";
    } else if (m.role == "tool") {
      append_hermes_tool_result(out, messages, i);
    }
  }
  if (opt.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (opt.enable_thinking == false) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

}  // namespace nextok::chat_detail
