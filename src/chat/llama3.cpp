// Llama 3 as the shipped Llama-3.1 tokenizer_config renders it: the short
// template (no "Cutting Knowledge Date" system header), bos before the first
// turn, every content trimmed.
#include "chat/formats.hpp"

namespace nextok::chat_detail {

std::string render_llama3(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::string& bos_token) {
  std::string out = bos_token;
  for (const ChatMessage& m : messages) {
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
    out += py_strip(m.content);
    out += "<|eot_id|>";
  }
  if (opt.add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

}  // namespace nextok::chat_detail
