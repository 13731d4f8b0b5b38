// ChatML as SmolLM2 writes it: turns verbatim (no trimming), and a default
// system turn before the first message when that is not a system message.
// SmolLM2's template has no tools; with tools we render them as Qwen3 does
// (Hermes style, the ChatML family's common form): docs/tool-calls.md.
#include "chat/formats.hpp"

namespace nextok::chat_detail {

std::string render_chatml(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::optional<std::string>& default_system) {
  std::string out;
  const bool system_first = messages.front().role == "system";
  std::size_t first = 0;
  if (!opt.tools.empty()) {
    std::optional<std::string_view> system;
    if (system_first)
      system = messages.front().content;
    else if (default_system)
      system = *default_system;
    out += hermes_tools_system(system, opt.tools);
    first = system_first ? 1 : 0;
  } else if (default_system && !system_first) {
    out += "<|im_start|>system\n" + *default_system + "<|im_end|>\n";
  }
  for (std::size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "tool") {
      append_hermes_tool_result(out, messages, i);
      continue;
    }
    out += "<|im_start|>" + m.role + "\n" + m.content;
    append_hermes_calls(out, m, m.content);
    out += "<|im_end|>\n";
  }
  if (opt.add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace nextok::chat_detail
