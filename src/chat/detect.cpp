// Template recognition by markers. Each family needs several markers of its
// own template, and near relatives that render differently (Llama 3.1's long
// template, Gemma 2, ChatML with tools or trimming) are refused rather than
// rendered wrongly.
#include <array>

#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok {
namespace {

constexpr const char* kSupported =
    "supported: Qwen3, Llama 3 (short template), Llama 3.1/3.2/3.3 (long template), Gemma 3, "
    "ChatML (SmolLM2-style), gpt-oss harmony";

bool has(std::string_view src, std::string_view marker) {
  return src.find(marker) != std::string_view::npos;
}

[[noreturn]] void unsupported(const std::string& why) {
  throw Error(ErrorCode::kUnsupported, "chat_template",
              "unsupported chat template: " + why + " (" + kSupported + ")");
}

// A literal system turn such as '<|im_start|>system\nYou are …<|im_end|>\n'.
// Text built from expressions (quotes, braces, escapes) is not a default.
std::optional<std::string> chatml_default_system(std::string_view src) {
  constexpr std::string_view kHead = "<|im_start|>system";
  constexpr std::string_view kEnd = "<|im_end|>";
  for (auto p = src.find(kHead); p != std::string_view::npos; p = src.find(kHead, p + 1)) {
    std::string_view rest = src.substr(p + kHead.size());
    if (rest.starts_with("\n")) {
      rest.remove_prefix(1);
    } else if (rest.starts_with("\\n")) {
      rest.remove_prefix(2);
    } else {
      continue;
    }
    const auto end = rest.find(kEnd);
    if (end == std::string_view::npos) continue;
    const std::string_view text = rest.substr(0, end);
    if (text.empty() || text.find_first_of("'\"{}\\+") != std::string_view::npos) continue;
    return std::string(text);
  }
  return std::nullopt;
}

}  // namespace

ChatTemplate ChatTemplate::detect(std::string_view src, std::string bos_token,
                                  std::string eos_token) {
  auto make = [&](ChatFormat f, std::optional<std::string> default_system = std::nullopt) {
    return ChatTemplate(f, std::move(bos_token), std::move(eos_token), std::move(default_system));
  };
  // gpt-oss harmony: channels, calls and the system header it writes.
  if (has(src, "<|start|>") && has(src, "<|channel|>") && has(src, "<|message|>") &&
      has(src, "<|call|>") && has(src, "Knowledge cutoff") && has(src, "Reasoning: ")) {
    return make(ChatFormat::kHarmony);
  }
  if (has(src, "<|im_start|>")) {
    constexpr std::array<std::string_view, 4> kQwen3 = {"<think>", "enable_thinking",
                                                        "reasoning_content", "last_query_index"};
    bool qwen3 = true;
    for (auto m : kQwen3) qwen3 = qwen3 && has(src, m);
    if (qwen3) return make(ChatFormat::kQwen3);
    if (has(src, "think") || has(src, "tool")) {
      unsupported("a ChatML template with thinking or tool handling other than Qwen3's");
    }
    if (has(src, "trim")) unsupported("a ChatML template that trims message content");
    return make(ChatFormat::kChatML, chatml_default_system(src));
  }
  if (has(src, "<|start_header_id|>") && has(src, "<|end_header_id|>") && has(src, "<|eot_id|>")) {
    // The long template Llama 3.1, 3.2 and 3.3 ship: its date header, its
    // tool instructions and its one-call rule, all of them.
    constexpr std::array<std::string_view, 6> kLlama31 = {
        "Cutting Knowledge Date: December 2023",
        "Today Date: ",
        "tools_in_user_message",
        "Given the following functions, please respond with a JSON for a function call",
        "\"parameters\": ",
        "This model only supports single tool-calls at once!"};
    bool llama31 = true;
    for (auto m : kLlama31) llama31 = llama31 && has(src, m);
    if (llama31) {
      // 3.2 dates the system turn with strftime_now; 3.1 and 3.3 with a fixed default.
      const bool clock = has(src, "strftime_now");
      // 3.1 and 3.3 have builtin tools (brave_search, wolfram_alpha); 3.2 has none.
      const bool builtin = has(src, "builtin_tools") && has(src, "<|python_tag|>");
      return ChatTemplate(ChatFormat::kLlama31, std::move(bos_token), std::move(eos_token),
                          std::nullopt, clock, builtin);
    }
    if (has(src, "Cutting Knowledge Date") || has(src, "tool")) {
      unsupported("a Llama 3 template with a date header or tools other than Llama 3.1's");
    }
    return make(ChatFormat::kLlama3);
  }
  if (has(src, "<start_of_turn>") && has(src, "<end_of_turn>")) {
    if (!has(src, "first_user_prefix")) {
      unsupported("a Gemma template without Gemma 3's system-prefix handling");
    }
    return make(ChatFormat::kGemma);
  }
  unsupported("no known family's markers found");
}

}  // namespace nextok
