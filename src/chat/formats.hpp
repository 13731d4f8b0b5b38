// Internal: one renderer per family, plus the Python string operations the
// templates use, so each renderer reads like the template it mirrors.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "nextok/chat.hpp"

namespace nextok::chat_detail {

// Jinja's `trim` is Python's str.strip(): it removes Unicode whitespace, not
// only ASCII, so content with e.g. U+3000 at an end must lose it too.
std::string_view py_strip(std::string_view s);
std::string_view strip_newlines(std::string_view s);   // s.strip('\n')
std::string_view lstrip_newlines(std::string_view s);  // s.lstrip('\n')
std::string_view rstrip_newlines(std::string_view s);  // s.rstrip('\n')

// Checks what every family shares: a non-empty conversation whose roles are
// system/user/assistant (and tool, where the family renders tools). Tool
// turns elsewhere are a kUnsupported feature.
void check_messages(std::span<const ChatMessage> messages, bool tools);

// Hermes-style tools (Qwen3's template; ChatML reuses it): the system turn
// that lists the tools after the system text (none: nullopt), an assistant
// turn's calls, and a run of tool results folded into one user turn.
std::string hermes_tools_system(const std::optional<std::string_view>& system,
                                std::span<const std::string> tools);
void append_hermes_calls(std::string& out, const ChatMessage& m, std::string_view content);
void append_hermes_tool_result(std::string& out, std::span<const ChatMessage> messages,
                               std::size_t i);

std::string render_chatml(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::optional<std::string>& default_system);
std::string render_qwen3(std::span<const ChatMessage> messages, const ChatOptions& opt);
std::string render_llama3(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::string& bos_token);
std::string render_gemma(std::span<const ChatMessage> messages, const ChatOptions& opt,
                         const std::string& bos_token);

// The long Llama 3.1 template (llama31.cpp); `date` is its date_string. The
// tools are shown as json.dumps(indent=4) writes them. `reads_builtin_tools`:
// the template has builtin tools (3.1, 3.3), so opt.builtin_tools counts.
std::string render_llama31(std::span<const ChatMessage> messages, const ChatOptions& opt,
                           const std::string& bos_token, std::string_view date,
                           bool reads_builtin_tools);
// The templates' strftime_now(format): the local time now.
std::string strftime_now(const char* format);

// gpt-oss harmony (harmony.cpp): the whole prompt, and the developer
// message's `namespace functions { ... }` from the tools (harmony_tools.cpp).
std::string render_harmony(std::span<const ChatMessage> messages, const ChatOptions& opt);
std::string harmony_tools_namespace(std::span<const std::string> tools);

// transformers' `tojson` (Python json.dumps, ensure_ascii=False).
std::string python_json(const nlohmann::ordered_json& v);
std::string python_json_string(std::string_view s);

}  // namespace nextok::chat_detail
