#include "call_scanner.hpp"

#include <nlohmann/json.hpp>

namespace nextok::server {

namespace {
bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
// A JSON string literal's value; nullopt if it is not one.
std::optional<std::string> string_value(std::string_view literal) {
  try {
    const auto v = nlohmann::json::parse(literal);
    if (v.is_string()) return v.get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}
}  // namespace

bool CallScanner::string_closes(char c) noexcept {
  if (escape_) {
    escape_ = false;
  } else if (c == '\\') {
    escape_ = true;
  } else if (c == '"') {
    return true;
  }
  return false;
}

bool CallScanner::at_arguments() const noexcept {
  return key_ == args_key_ || key_ == "arguments";
}

void CallScanner::finish_value(std::string_view text, std::size_t end) {
  const std::string_view raw = text.substr(value_begin_, end - value_begin_);
  if (key_ == "name") {
    if (auto s = string_value(raw)) name_ = std::move(*s);
  } else if (at_arguments()) {
    args_begin_ = value_begin_;
    args_end_ = end;
  }
  state_ = State::kAfter;
}

void CallScanner::advance(std::string_view text) {
  while (pos_ < text.size() && state_ != State::kDone && state_ != State::kFail) {
    const char c = text[pos_];
    switch (state_) {
      case State::kOpen:
        if (!space(c)) state_ = c == '{' ? State::kKey : State::kFail;
        break;
      case State::kKey:
        if (c == '"') {
          key_begin_ = pos_;
          escape_ = false;
          state_ = State::kKeyString;
        } else if (c == '}') {
          state_ = State::kDone;
        } else if (!space(c)) {
          state_ = State::kFail;
        }
        break;
      case State::kKeyString:
        if (string_closes(c)) {
          key_ = string_value(text.substr(key_begin_, pos_ + 1 - key_begin_)).value_or("");
          state_ = State::kColon;
        }
        break;
      case State::kColon:
        if (!space(c)) state_ = c == ':' ? State::kValue : State::kFail;
        break;
      case State::kValue:
        if (space(c)) break;
        value_begin_ = pos_;
        if (at_arguments()) args_begin_ = pos_;
        escape_ = false;
        in_string_ = false;
        if (c == '"') {
          state_ = State::kString;
        } else if (c == '{' || c == '[') {
          depth_ = 1;
          state_ = State::kNested;
        } else {
          state_ = State::kScalar;
        }
        break;
      case State::kString:
        if (string_closes(c)) finish_value(text, pos_ + 1);
        break;
      case State::kNested:
        if (in_string_) {
          if (string_closes(c)) in_string_ = false;
        } else if (c == '"') {
          in_string_ = true;
        } else if (c == '{' || c == '[') {
          ++depth_;
        } else if ((c == '}' || c == ']') && --depth_ == 0) {
          finish_value(text, pos_ + 1);
        }
        break;
      case State::kScalar:
        if (space(c) || c == ',' || c == '}' || c == ']') {
          finish_value(text, pos_);
          continue;  // the delimiter is read again after the value
        }
        break;
      case State::kAfter:
        if (c == ',') {
          state_ = State::kKey;
        } else if (c == '}') {
          state_ = State::kDone;
        } else if (!space(c)) {
          state_ = State::kFail;
        }
        break;
      case State::kDone:
      case State::kFail:
        break;
    }
    ++pos_;
  }
}

std::optional<std::string_view> raw_member(std::string_view object, std::string_view key) {
  CallScanner s(0, key);
  s.advance(object);
  if (!s.done() || s.args_end() == CallScanner::kOpen) return std::nullopt;
  return object.substr(s.args_begin(), s.args_end() - s.args_begin());
}

}  // namespace nextok::server
