// ChatML as SmolLM2 writes it: turns verbatim (no trimming), and a default
// system turn before the first message when that is not a system message.
#include "chat/formats.hpp"

namespace nextok::chat_detail {

std::string render_chatml(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::optional<std::string>& default_system) {
  std::string out;
  if (default_system && messages.front().role != "system") {
    out += "<|im_start|>system\n" + *default_system + "<|im_end|>\n";
  }
  for (const ChatMessage& m : messages) {
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  if (opt.add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace nextok::chat_detail
