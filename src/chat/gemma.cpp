// Gemma 3: no system role, so a leading system message becomes a prefix of
// the first turn; "assistant" is called "model"; turns must alternate.
#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok::chat_detail {

std::string render_gemma(std::span<const ChatMessage> messages, const ChatOptions& opt,
                         const std::string& bos_token) {
  std::string out = bos_token;
  std::string first_user_prefix;  // not trimmed, unlike the turns
  if (messages.front().role == "system") {
    first_user_prefix = messages.front().content + "\n\n";
    messages = messages.subspan(1);
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    // The template's own check: user at even positions, anything else at odd.
    if ((m.role == "user") != (i % 2 == 0)) {
      throw Error(ErrorCode::kInvalidArgument, "role",
                  "Conversation roles must alternate user/assistant/user/assistant/...");
    }
    out += "<start_of_turn>";
    out += m.role == "assistant" ? std::string("model") : m.role;
    out += "\n";
    if (i == 0) out += first_user_prefix;
    out += py_strip(m.content);
    out += "<end_of_turn>\n";
  }
  if (opt.add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

}  // namespace nextok::chat_detail
