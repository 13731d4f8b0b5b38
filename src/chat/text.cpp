// Python string operations used by the chat templates, on UTF-8 bytes.
#include <cstdint>

#include "chat/formats.hpp"
#include "nextok/error.hpp"
#include "vocab/utf8.hpp"

namespace nextok::chat_detail {
namespace {

// str.isspace() in Python 3: White_Space and the four separators U+1C..U+1F.
bool is_py_space(char32_t c) {
  return vocab::is_white_space(c) || (c >= 0x1C && c <= 0x1F);
}

// Decodes the code point starting at s[i]; returns its byte length, 0 if the
// bytes are not valid UTF-8 there (then stripping stops, which is safe).
std::size_t decode_at(std::string_view s, std::size_t i, char32_t& out) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  char32_t c = 0;
  if (b0 < 0x80) {
    out = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    c = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    c = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    c = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  out = c;
  return len;
}

}  // namespace

std::string_view py_strip(std::string_view s) {
  std::size_t begin = 0;
  while (begin < s.size()) {
    char32_t c = 0;
    const std::size_t n = decode_at(s, begin, c);
    if (n == 0 || !is_py_space(c)) break;
    begin += n;
  }
  std::size_t end = s.size();
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && end - start < 4 &&
           (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) {
      --start;
    }
    char32_t c = 0;
    if (decode_at(s, start, c) != end - start || !is_py_space(c)) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

std::string_view lstrip_newlines(std::string_view s) {
  const auto p = s.find_first_not_of('\n');
  return p == std::string_view::npos ? std::string_view{} : s.substr(p);
}

std::string_view rstrip_newlines(std::string_view s) {
  const auto p = s.find_last_not_of('\n');
  return p == std::string_view::npos ? std::string_view{} : s.substr(0, p + 1);
}

std::string_view strip_newlines(std::string_view s) {
  return rstrip_newlines(lstrip_newlines(s));
}

void check_messages(std::span<const ChatMessage> messages, bool tools) {
  // transformers refuses an empty conversation before any template runs.
  if (messages.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "messages", "the conversation has no messages");
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    const std::string where = "message " + std::to_string(i) + ": ";
    if (!tools && !messages[i].tool_calls.empty())
      throw Error(ErrorCode::kUnsupported, "tool_calls",
                  where + "this chat template does not render tool calls");
    if (role == "system" || role == "user" || role == "assistant") continue;
    if (tools && role == "tool") continue;
    if (role == "tool" || role == "ipython" || role == "function") {
      throw Error(ErrorCode::kUnsupported, "role",
                  where + "role \"" + role + "\": tool messages are not supported");
    }
    throw Error(ErrorCode::kInvalidArgument, "role",
                where + "unknown role \"" + role + "\" (expected system, user or assistant)");
  }
}

}  // namespace nextok::chat_detail
