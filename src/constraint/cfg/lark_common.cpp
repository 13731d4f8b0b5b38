#include "constraint/cfg/lark_syntax.hpp"

#include <string_view>

#include "nextok/json_schema.hpp"

namespace nextok::constraint::cfg::lark {

namespace {

// The terminals of lark's `common` module that %import can name, spelled
// here as the languages lark's lexer gives them (lazy patterns as the
// shortest match they stop at).
constexpr std::string_view kCommon = R"lark(
DIGIT: /[0-9]/
HEXDIGIT: /[0-9a-fA-F]/
INT: /[0-9]+/
SIGNED_INT: /[+-]?[0-9]+/
DECIMAL: /[0-9]+\.[0-9]*|\.[0-9]+/
_EXP: /[eE][+-]?[0-9]+/
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: /[+-]?/ FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: /[+-]?/ NUMBER
_STRING_INNER: /[^\n]*/
ESCAPED_STRING: /"([^"\\\n]|\\[^\n])*"/
LCASE_LETTER: /[a-z]/
UCASE_LETTER: /[A-Z]/
LETTER: /[a-zA-Z]/
WORD: /[a-zA-Z]+/
CNAME: /[a-zA-Z_][a-zA-Z0-9_]*/
WS_INLINE: /[ \t]+/
WS: /[ \t\f\r\n]+/
CR: /\r/
LF: /\n/
NEWLINE: /(\r?\n)+/
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: /--[^\n]*/
)lark";

}  // namespace

const Definitions& common() {
  // Read once; its builder only reports syntax errors, which it has none of.
  static const ConstraintLimits none;
  static const CfgBuilder errors(kCommon, none);
  static const Definitions defs = read(kCommon, errors);
  return defs;
}

}  // namespace nextok::constraint::cfg::lark
