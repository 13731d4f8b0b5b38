// Hermes-style tool rendering, as Qwen3's template writes it: the tools as
// JSON lines inside <tools></tools> in the system turn, each assistant call
// as <tool_call>{"name": …, "arguments": …}</tool_call>, and consecutive
// tool results as <tool_response> blocks of one user turn.
#include "chat/formats.hpp"

namespace nextok::chat_detail {

std::string hermes_tools_system(const std::optional<std::string_view>& system,
                                std::span<const std::string> tools) {
  std::string out = "<|im_start|>system\n";
  if (system) {
    out += *system;
    out += "\n\n";
  }
  out +=
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const std::string& t : tools) {
    out += '\n';
    out += t;
  }
  out +=
      "\n</tools>\n\nFor each function call, return a json object with function name and "
      "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
      "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";
  return out;
}

void append_hermes_calls(std::string& out, const ChatMessage& m, std::string_view content) {
  for (std::size_t k = 0; k < m.tool_calls.size(); ++k) {
    if (k > 0 || !content.empty()) out += '\n';
    out += "<tool_call>\n{\"name\": \"";
    out += m.tool_calls[k].name;
    out += "\", \"arguments\": ";
    out += m.tool_calls[k].arguments;
    out += "}\n</tool_call>";
  }
}

void append_hermes_tool_result(std::string& out, std::span<const ChatMessage> messages,
                               std::size_t i) {
  if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
  out += "\n<tool_response>\n";
  out += messages[i].content;
  out += "\n</tool_response>";
  if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
}

}  // namespace nextok::chat_detail
