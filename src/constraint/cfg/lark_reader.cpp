#include "constraint/cfg/lark_reader.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "vocab/utf8.hpp"

namespace nextok::constraint::cfg::lark {

void Reader::space(bool lines) {
  while (!eof()) {
    const char c = cur();
    // `//` comments, and `#` ones as llguidance reads them (no Lark token
    // holds a '#' outside strings and regexes).
    if ((c == '/' && at(pos_ + 1) == '/') || c == '#') {
      while (!eof() && cur() != '\n') ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\f' || (c == '\r' && at(pos_ + 1) == '\n') ||
               (lines && (c == '\n' || c == '\r'))) {
      ++pos_;
    } else if (c == '\\' && (at(pos_ + 1) == '\n' || at(pos_ + 1) == '\r')) {
      pos_ += 2;
    } else {
      break;
    }
  }
}

std::string Reader::name() {
  const size_t start = pos_;
  while (name_char(cur()) ||
         (cur() == '-' && pos_ > start && at(pos_ + 1) != '>' && name_char(at(pos_ + 1))))
    ++pos_;
  if (pos_ == start) fail(start, "expecting a name");
  return std::string(src_.substr(start, pos_ - start));
}

uint32_t Reader::single(const Expr& lit, size_t start) const {
  size_t k = 0;
  const uint32_t v = lit.text.empty() ? 0 : vocab::utf8_next(lit.text, k);
  if (lit.text.empty() || k != lit.text.size()) {
    fail(start, "a range needs one-character strings");
  }
  return v;
}

uint32_t Reader::hex(size_t digits, size_t start) {
  uint32_t v = 0;
  for (size_t k = 0; k < digits; ++k, ++pos_) {
    const char c = cur();
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) fail(start, "expecting " + std::to_string(digits) + " hex digits");
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

Expr Reader::literal() {
  const size_t start = pos_++;
  Expr lit{Expr::Kind::kLiteral};
  lit.at = start;
  while (cur() != '"') {
    if (eof() || cur() == '\n') fail(start, "unterminated string");
    if (cur() != '\\') {
      lit.text.push_back(cur());
      ++pos_;
      continue;
    }
    const char e = at(pos_ + 1);
    pos_ += 2;
    static constexpr std::pair<char, char> kSimple[] = {
        {'n', '\n'}, {'t', '\t'}, {'r', '\r'},  {'f', '\f'}, {'v', '\v'}, {'a', '\a'},
        {'b', '\b'}, {'0', '\0'}, {'\\', '\\'}, {'"', '"'},  {'\'', '\''}};
    if (const auto* x = std::find_if(std::begin(kSimple), std::end(kSimple),
                                     [&](const auto& p) { return p.first == e; });
        x != std::end(kSimple)) {
      lit.text.push_back(x->second);
      continue;
    }
    switch (e) {
      case 'x':
        append_utf8(hex(2, pos_ - 2), lit.text);
        break;
      case 'u':
        append_utf8(hex(4, pos_ - 2), lit.text);
        break;
      case 'U': {
        const uint32_t cp = hex(8, pos_ - 2);
        if (cp > 0x10FFFF) fail(pos_ - 10, "a code point out of range");
        append_utf8(cp, lit.text);
        break;
      }
      default:
        if (e == '\0') fail(start, "unterminated string");
        lit.text.push_back('\\');
        pos_ -= 1;  // the character itself is read as text
    }
  }
  ++pos_;
  if (cur() == 'i' && !name_char(at(pos_ + 1))) {
    lit.icase = true;
    ++pos_;
  }
  return lit;
}

Expr Reader::regex() {
  const size_t start = pos_++;
  Expr rx{Expr::Kind::kRegex};
  rx.at = start;
  // Lark ends a regex at the first unescaped '/', inside a class too.
  while (cur() != '/') {
    if (eof() || cur() == '\n') fail(start, "unterminated regex");
    if (cur() == '\\' && at(pos_ + 1) == '/') {
      rx.text.push_back('/');
      pos_ += 2;
      continue;
    }
    if (cur() == '\\') {
      rx.text.push_back(cur());
      ++pos_;
    }
    if (eof()) fail(start, "unterminated regex");
    rx.text.push_back(cur());
    ++pos_;
  }
  ++pos_;
  while (name_char(cur())) {
    const char f = cur();
    if (f == 'i') {
      rx.icase = true;
    } else if (f == 's') {
      rx.dotall = true;
    } else if (f != 'u') {
      fail(pos_, std::string("the regex flag '") + f + "' is not supported");
    }
    ++pos_;
  }
  return rx;
}

}  // namespace nextok::constraint::cfg::lark
