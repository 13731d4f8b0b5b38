#include "vocab/json_scan.hpp"

#include <simdjson.h>

#include <cstring>

#include "nextok/error.hpp"
#include "vocab/utf8.hpp"

namespace nextok::vocab {

namespace {
constexpr int kMaxDepth = 256;
}

JsonScanner::JsonScanner(std::string_view in, std::string_view name) : in_(in), name_(name) {
  if (!simdjson::validate_utf8(in.data(), in.size())) {
    pos_ = utf8_first_invalid(in);
    fail("invalid UTF-8");
  }
}

void JsonScanner::fail(const std::string& what) const {
  throw Error(ErrorCode::kMalformedFile, "tokenizer",
              std::string(name_) + ": invalid JSON at byte " + std::to_string(pos_) + ": " + what);
}

void JsonScanner::expect(char c) {
  if (!consume(c)) {
    fail(pos_ >= in_.size() ? std::string("unexpected end of file, expected '") + c + "'"
                            : std::string("expected '") + c + "'");
  }
}

uint32_t JsonScanner::hex4() {
  if (pos_ + 4 > in_.size()) fail("truncated \\u escape");
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = in_[pos_++];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      fail("bad hex digit in \\u escape");
    }
  }
  return v;
}

std::string_view JsonScanner::string(std::deque<std::string>& arena) {
  skip_ws();
  if (pos_ >= in_.size() || in_[pos_] != '"') fail("expected a string");
  const size_t start = ++pos_;
  // Fast path: no escapes. Eight bytes at a time while none is a quote,
  // backslash or control byte (UTF-8 was validated for the whole input).
  const char* d = in_.data();
  const size_t n = in_.size();
  while (pos_ < n) {
    while (pos_ + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, d + pos_, 8);
      constexpr uint64_t k01 = 0x0101010101010101ULL, k80 = 0x8080808080808080ULL;
      const uint64_t quote = w ^ (k01 * '"'), slash = w ^ (k01 * '\\');
      // High bit of a byte set where it is '"', '\\' or below 0x20 (or a
      // false positive next to one: harmless, the byte loop decides).
      const uint64_t special =
          (((quote - k01) & ~quote) | ((slash - k01) & ~slash) | ((w - k01 * 0x20) & ~w)) & k80;
      if (special) break;
      pos_ += 8;
    }
    if (pos_ >= n) break;
    const auto c = static_cast<unsigned char>(d[pos_]);
    if (c == '"') {
      const std::string_view s = in_.substr(start, pos_ - start);
      ++pos_;
      return s;
    }
    if (c == '\\') break;
    if (c < 0x20) fail("control character in a string");
    ++pos_;
  }
  if (pos_ >= in_.size()) fail("unterminated string");
  std::string& out = arena.emplace_back(in_.substr(start, pos_ - start));
  while (true) {
    if (pos_ >= in_.size()) fail("unterminated string");
    const auto c = static_cast<unsigned char>(in_[pos_]);
    if (c == '"') {
      ++pos_;
      break;
    }
    if (c < 0x20) fail("control character in a string");
    if (c != '\\') {
      out.push_back(static_cast<char>(c));
      ++pos_;
      continue;
    }
    if (++pos_ >= in_.size()) fail("unterminated escape");
    const char e = in_[pos_++];
    switch (e) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '/':
        out.push_back('/');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        uint32_t cp = hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (pos_ + 2 > in_.size() || in_[pos_] != '\\' || in_[pos_ + 1] != 'u') {
            fail("lone high surrogate in a \\u escape");
          }
          pos_ += 2;
          const uint32_t lo = hex4();
          if (lo < 0xDC00 || lo > 0xDFFF) fail("bad low surrogate in a \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("lone low surrogate in a \\u escape");
        }
        if (cp < 0x80) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        break;
      }
      default:
        fail("unknown escape");
    }
  }
  return out;
}

uint32_t JsonScanner::id() {
  skip_ws();
  const size_t start = pos_;
  uint64_t v = 0;
  while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') {
    v = v * 10 + static_cast<uint64_t>(in_[pos_] - '0');
    if (v > 0x7FFFFFFF) fail("token id is too large");
    ++pos_;
  }
  if (pos_ == start) fail("expected a token id (a non-negative integer)");
  if (in_[start] == '0' && pos_ - start > 1) fail("leading zero in a number");
  if (pos_ < in_.size() && (in_[pos_] == '.' || in_[pos_] == 'e' || in_[pos_] == 'E')) {
    fail("token id must be an integer");
  }
  return static_cast<uint32_t>(v);
}

void JsonScanner::skip_string() {
  (void)string(scratch_);
  if (scratch_.size() > 64) scratch_.clear();
}

void JsonScanner::skip_number() {
  auto digits = [&] {
    const size_t s = pos_;
    while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_;
    if (pos_ == s) fail("malformed number");
  };
  if (in_[pos_] == '-') ++pos_;
  if (pos_ < in_.size() && in_[pos_] == '0') {
    ++pos_;
  } else {
    digits();
  }
  if (pos_ < in_.size() && in_[pos_] == '.') {
    ++pos_;
    digits();
  }
  if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) ++pos_;
    digits();
  }
}

void JsonScanner::skip_literal(std::string_view word) {
  if (in_.substr(pos_, word.size()) != word) fail("invalid literal");
  pos_ += word.size();
}

std::string_view JsonScanner::value() {
  skip_ws();
  const size_t start = pos_;
  if (pos_ >= in_.size()) fail("unexpected end of file, expected a value");
  const char c = in_[pos_];
  if (c == '{' || c == '[') {
    if (++depth_ > kMaxDepth) fail("nesting is too deep");
    const char close = c == '{' ? '}' : ']';
    ++pos_;
    if (!consume(close)) {
      do {
        if (c == '{') {
          skip_string();
          expect(':');
        }
        value();
      } while (consume(','));
      expect(close);
    }
    --depth_;
  } else if (c == '"') {
    skip_string();
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    skip_number();
  } else if (c == 't') {
    skip_literal("true");
  } else if (c == 'f') {
    skip_literal("false");
  } else if (c == 'n') {
    skip_literal("null");
  } else {
    fail(std::string("unexpected character '") + c + "'");
  }
  return in_.substr(start, pos_ - start);
}

}  // namespace nextok::vocab
