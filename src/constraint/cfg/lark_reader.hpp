// The character level of Lark's grammar syntax: position, spaces and
// comments, names, lists, strings and regexes, with errors at line:column.
// lark_syntax.cpp reads definitions and directives on top of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "constraint/cfg/cfg_builder.hpp"
#include "constraint/cfg/lark_syntax.hpp"

namespace nextok::constraint::cfg::lark {

inline bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class Reader {
 protected:
  Reader(std::string_view src, const CfgBuilder& b) : src_(src), b_(b) {}

  [[noreturn]] void fail(size_t at, const std::string& what) const { b_.fail(at, what); }
  bool eof() const { return pos_ >= src_.size(); }
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }
  char cur() const { return at(pos_); }

  // Spaces, tabs, comments and backslash-newlines; newlines too if `lines`.
  void space(bool lines);
  void blank() { space(true); }
  void end_of_line() {
    space(false);
    if (!eof() && cur() != '\n') fail(pos_, std::string("unexpected '") + cur() + "'");
  }

  // A comma-separated list from the opening bracket at pos_ to `close`
  // (newlines allowed), item() reading each entry.
  template <typename Item>
  void list(char close, Item item) {
    ++pos_;
    space(true);
    for (;;) {
      item();
      space(true);
      if (cur() == close) break;
      if (cur() != ',') fail(pos_, std::string("expecting ',' or '") + close + "'");
      ++pos_;
      space(true);
    }
    ++pos_;
  }

  // llguidance's dialect also allows '-' inside a name ("end-rule"), never
  // as the start of '->'.
  std::string name();

  // The one code point of a range's string.
  uint32_t single(const Expr& lit, size_t start) const;
  // The text between a literal's delimiters as Lark reads it
  // (load_grammar.py, eval_escaping): an escape other than \\ and
  // \U \u \x \n \f \t \r keeps its backslash, a backslash before a quote
  // is dropped, then Python evaluates the result as a string literal. So a
  // regex's `\\"` is a quote and a string's "\v" a backslash and a v.
  // In a regex, \u{...} and \x{...} (llguidance's Rust escapes) are kept.
  std::string evaluated(std::string_view raw, size_t start, bool regex) const;
  // From the opening delimiter at `start` to the unescaped `end` (pos_
  // left on it): the text between them.
  std::string_view body(char end, size_t start, const char* unterminated);

  // "...": evaluated, each \\ then one backslash (as Lark does); then the i
  // flag.
  Expr literal();

  // /.../flags: the pattern evaluated.
  Expr regex();

  std::string_view src_;
  const CfgBuilder& b_;
  size_t pos_ = 0;
};

}  // namespace nextok::constraint::cfg::lark
