// Internal: one renderer per family, plus the Python string operations the
// templates use, so each renderer reads like the template it mirrors.
#pragma once

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
// system/user/assistant. Tool turns are a kUnsupported feature.
void check_messages(std::span<const ChatMessage> messages);

std::string render_chatml(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::optional<std::string>& default_system);
std::string render_qwen3(std::span<const ChatMessage> messages, const ChatOptions& opt);
std::string render_llama3(std::span<const ChatMessage> messages, const ChatOptions& opt,
                          const std::string& bos_token);
std::string render_gemma(std::span<const ChatMessage> messages, const ChatOptions& opt,
                         const std::string& bos_token);

}  // namespace nextok::chat_detail
