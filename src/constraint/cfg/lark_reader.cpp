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

std::string Reader::evaluated(std::string_view raw, size_t start, bool regex) const {
  // Lark's rewriting.
  std::string w;
  for (size_t k = 0; k < raw.size(); ++k) {
    w.push_back(raw[k]);
    if (raw[k] != '\\') continue;
    if (++k == raw.size()) fail(start, "a literal ends in a lone backslash");
    const char n2 = raw[k];
    // \u{...} and \x{...} in a regex (llguidance's Rust escapes; Python
    // cannot evaluate them, so lark refuses them) reach the regex as written.
    const bool rust = regex && (n2 == 'u' || n2 == 'x') && k + 1 < raw.size() && raw[k + 1] == '{';
    if (n2 == '\\') {
      w += "\\\\";
    } else if (rust || std::string_view("Uuxnftr").find(n2) == std::string_view::npos) {
      w.push_back('\\');
    }
    w.push_back(n2);
  }
  std::string q;  // w.replace('\\"', '"').replace("'", "\\'")
  for (size_t k = 0; k < w.size(); ++k) {
    if (w[k] == '\\' && k + 1 < w.size() && w[k + 1] == '"') continue;
    if (w[k] == '\'') q.push_back('\\');
    q.push_back(w[k]);
  }
  // Python's string literal escapes (those the rewriting can leave).
  std::string out;
  const auto hex = [&](size_t& k, size_t digits) {
    uint32_t v = 0;
    for (size_t d = 0; d < digits; ++d, ++k) {
      const char c = k < q.size() ? q[k] : '\0';
      const int x = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (x < 0) fail(start, "expecting " + std::to_string(digits) + " hex digits");
      v = v * 16 + static_cast<uint32_t>(x);
    }
    if (v > 0x10FFFF) fail(start, "a code point out of range");
    if (v >= 0xD800 && v <= 0xDFFF) fail(start, "a surrogate code point");
    append_utf8(v, out);
  };
  for (size_t k = 0; k < q.size();) {
    if (q[k] != '\\' || k + 1 == q.size()) {
      out.push_back(q[k++]);
      continue;
    }
    const char e = q[k + 1];
    k += 2;
    switch (e) {
      case '\\':
      case '\'':
      case '"':
        out.push_back(e);
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'x':
        hex(k, 2);
        break;
      case 'u':
        hex(k, 4);
        break;
      case 'U':
        hex(k, 8);
        break;
      default:  // the rewriting leaves no other escape; Python keeps unknown ones
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return out;
}

std::string_view Reader::body(char end, size_t start, const char* unterminated) {
  while (cur() != end) {
    if (eof() || cur() == '\n') fail(start, unterminated);
    pos_ += cur() == '\\' ? 2 : 1;
  }
  if (pos_ > src_.size()) fail(start, unterminated);
  return src_.substr(start + 1, pos_ - start - 1);
}

Expr Reader::literal() {
  const size_t start = pos_++;
  Expr lit{Expr::Kind::kLiteral};
  lit.at = start;
  const std::string s = evaluated(body('"', start, "unterminated string"), start, false);
  for (size_t k = 0; k < s.size(); ++k) {  // s.replace('\\\\', '\\')
    lit.text.push_back(s[k]);
    if (s[k] == '\\' && k + 1 < s.size() && s[k + 1] == '\\') ++k;
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
  rx.text = evaluated(body('/', start, "unterminated regex"), start, true);
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
