// Lark's grammar syntax (docs/constraint-engine.md, "Lark") read into
// definitions, before lark.cpp compiles them into the grammar IR.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "constraint/cfg/cfg_builder.hpp"
#include "constraint/cfg/lark_dialect.hpp"

namespace nextok::constraint::cfg::lark {

struct Expr {
  // kAnd, kNot: llguidance's & and ~ (terminals only).
  // kSpecial: a token named <text> (llguidance; text without the brackets).
  // kSubstring: %regex {substring_...} (llguidance), its chunks in `kids`
  // as literals.
  enum class Kind {
    kAlt,
    kSeq,
    kLiteral,
    kRegex,
    kRange,
    kName,
    kRepeat,
    kJson,
    kGbnf,
    kAnd,
    kNot,
    kSpecial,
    kSubstring
  };
  Expr() = default;
  explicit Expr(Kind k) : kind(k) {}
  Kind kind = Kind::kSeq;
  std::vector<Expr> kids;
  std::string text;  // literal bytes, regex pattern, name, %json schema, %gbnf object
  bool icase = false, dotall = false;
  uint32_t lo = 0, hi = 0;  // kRange
  long min = 0, max = 0;    // kRepeat; max < 0 = unbounded
  size_t at = 0;
};

struct Def {
  Def() = default;
  Def(bool is_terminal, Expr def_body, size_t pos)
      : terminal(is_terminal), body(std::move(def_body)), at(pos) {}
  bool terminal = false;
  Expr body;
  size_t at = 0;
  bool declared = false;  // %declare: a terminal with no pattern, so it matches nothing
  // llguidance's [lazy] and [suffix=X] (or [stop=X]): the body (then X) is
  // one lexeme that ends at its first possible end. [stop=""]: the body is
  // one lexeme, not lazy.
  bool lazy = false;
  bool lexeme = false;
  std::vector<Expr> suffix;  // empty or one
};

// A grammar text's definitions and directives.
struct Definitions {
  std::map<std::string, Def, std::less<>> defs;
  std::vector<Expr> ignores;
  LlguidanceOptions llguidance;
  std::map<std::string, std::pair<std::string, size_t>, std::less<>> imports;  // local → common
};

// Throws through `b` (line:column) on syntax errors.
Definitions read(std::string_view text, const CfgBuilder& b);
// The terminals of lark's `common` module that %import can name.
const Definitions& common();

bool is_terminal_name(std::string_view n);

}  // namespace nextok::constraint::cfg::lark
