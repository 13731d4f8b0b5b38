// ChatTemplate: family names, construction and dispatch to the renderers.
#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok {

const char* chat_format_name(ChatFormat format) noexcept {
  switch (format) {
    case ChatFormat::kChatML:
      return "chatml";
    case ChatFormat::kQwen3:
      return "qwen3";
    case ChatFormat::kLlama3:
      return "llama3";
    case ChatFormat::kGemma:
      return "gemma";
    case ChatFormat::kHarmony:
      return "harmony";
    case ChatFormat::kLlama31:
      return "llama3.1";
  }
  return "unknown";
}

bool chat_format_has_tools(ChatFormat format) noexcept {
  return format == ChatFormat::kQwen3 || format == ChatFormat::kChatML ||
         format == ChatFormat::kHarmony || format == ChatFormat::kLlama31;
}

ChatTemplate ChatTemplate::of_format(ChatFormat format, std::string bos_token,
                                     std::string eos_token) {
  if (format != ChatFormat::kChatML) {
    return ChatTemplate(format, std::move(bos_token), std::move(eos_token), std::nullopt);
  }
  return ChatTemplate(format, std::move(bos_token), std::move(eos_token),
                      "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
}

std::string ChatTemplate::apply(std::span<const ChatMessage> messages,
                                const ChatOptions& opt) const {
  // Llama 3.1's own options, refused by every other family (harmony too).
  const auto llama31_only = [&](const char* name) {
    return Error(ErrorCode::kUnsupported, name,
                 std::string(name) + " is a Llama 3.1 option; this template is " +
                     chat_format_name(format_));
  };
  if (format_ != ChatFormat::kLlama31 && opt.builtin_tools) throw llama31_only("builtin_tools");
  if (format_ != ChatFormat::kLlama31 && opt.tools_in_user_message) {
    throw llama31_only("tools_in_user_message");
  }
  // Harmony has its own roles (developer) and options: it checks them itself.
  if (format_ == ChatFormat::kHarmony) return chat_detail::render_harmony(messages, opt);
  if (format_ == ChatFormat::kLlama31 && !opt.reasoning_effort && !opt.enable_thinking) {
    // Its own roles (ipython) and checks; the date is its date_string.
    const std::string date =
        opt.current_date
            ? *opt.current_date
            : (date_from_clock_ ? chat_detail::strftime_now("%d %b %Y") : "26 Jul 2024");
    return chat_detail::render_llama31(messages, opt, bos_token_, date, reads_builtin_tools_);
  }
  if (opt.reasoning_effort || opt.current_date) {
    throw Error(ErrorCode::kUnsupported, "reasoning_effort",
                std::string("reasoning_effort is a gpt-oss option, current_date a gpt-oss and "
                            "Llama 3.1 one; this template is ") +
                    chat_format_name(format_));
  }
  const bool tools = chat_format_has_tools(format_);
  chat_detail::check_messages(messages, tools);
  if (!tools && !opt.tools.empty()) {
    throw Error(ErrorCode::kUnsupported, "tools",
                std::string("this chat template (") + chat_format_name(format_) +
                    ") has no tool format; tools work with qwen3 and chatml");
  }
  if (opt.enable_thinking && format_ != ChatFormat::kQwen3) {
    throw Error(ErrorCode::kUnsupported, "enable_thinking",
                std::string("enable_thinking is a Qwen3 option; this template is ") +
                    chat_format_name(format_));
  }
  switch (format_) {
    case ChatFormat::kChatML:
      return chat_detail::render_chatml(messages, opt, default_system_);
    case ChatFormat::kQwen3:
      return chat_detail::render_qwen3(messages, opt);
    case ChatFormat::kLlama3:
      return chat_detail::render_llama3(messages, opt, bos_token_);
    case ChatFormat::kGemma:
      return chat_detail::render_gemma(messages, opt, bos_token_);
    case ChatFormat::kHarmony:
    case ChatFormat::kLlama31:
      break;  // rendered above
  }
  throw Error(ErrorCode::kUnsupported, "format", "unknown chat format");
}

}  // namespace nextok
