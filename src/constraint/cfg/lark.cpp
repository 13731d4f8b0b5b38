#include "constraint/cfg/lark.hpp"

#include <map>
#include <optional>
#include <set>

#include "constraint/cfg/cfg_builder.hpp"
#include "constraint/regex/regex_parser.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

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

struct Expr {
  enum class Kind { kAlt, kSeq, kLiteral, kRegex, kRange, kName, kRepeat };
  Expr() = default;
  explicit Expr(Kind k) : kind(k) {}
  Kind kind = Kind::kSeq;
  std::vector<Expr> kids;
  std::string text;  // literal bytes, regex pattern, name
  bool icase = false, dotall = false;
  uint32_t lo = 0, hi = 0;  // kRange
  long min = 0, max = 0;    // kRepeat; max < 0 = unbounded
  size_t at = 0;
};

struct Def {
  bool terminal = false;
  Expr body;
  size_t at = 0;
};

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_terminal_name(std::string_view n) {
  for (char c : n) {
    if (c != '_') return c >= 'A' && c <= 'Z';
  }
  return false;
}

// Lark's grammar syntax into definitions and directives.
class Syntax {
 public:
  Syntax(std::string_view src, const CfgBuilder& b) : src_(src), b_(b) {}

  std::map<std::string, Def, std::less<>> defs;
  std::vector<Expr> ignores;
  std::map<std::string, std::pair<std::string, size_t>, std::less<>> imports;  // local → common

  void run() {
    for (;;) {
      blank();
      if (eof()) return;
      if (cur() == '%') {
        directive();
      } else {
        definition();
      }
      end_of_line();
    }
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const { b_.fail(at, what); }
  bool eof() const { return pos_ >= src_.size(); }
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }
  char cur() const { return at(pos_); }

  // Spaces, tabs, comments and backslash-newlines; newlines too if `lines`.
  void space(bool lines) {
    while (!eof()) {
      const char c = cur();
      if (c == '/' && at(pos_ + 1) == '/') {
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
  void blank() { space(true); }
  void end_of_line() {
    space(false);
    if (!eof() && cur() != '\n') fail(pos_, std::string("unexpected '") + cur() + "'");
  }

  std::string name() {
    const size_t start = pos_;
    while (name_char(cur())) ++pos_;
    if (pos_ == start) fail(start, "expecting a name");
    return std::string(src_.substr(start, pos_ - start));
  }

  void definition() {
    const size_t start = pos_;
    if (cur() == '?' || cur() == '!') ++pos_;
    const std::string n = name();
    if (cur() == '{') fail(pos_, "templates are not supported");
    if (cur() == '.') {  // a priority: it orders ambiguous parses, not the language
      ++pos_;
      if (cur() == '-') ++pos_;
      if (!(cur() >= '0' && cur() <= '9')) fail(pos_, "expecting a priority number");
      while (cur() >= '0' && cur() <= '9') ++pos_;
    }
    space(false);
    if (cur() != ':') fail(pos_, "expecting ':'");
    ++pos_;
    space(false);
    Def d{is_terminal_name(n), expansions(false), start};
    if (!defs.emplace(n, std::move(d)).second) fail(start, "'" + n + "' is defined twice");
  }

  void directive() {
    const size_t start = pos_;
    ++pos_;
    const std::string what = name();
    space(false);
    if (what == "ignore") {
      ignores.push_back(expansions(false));
    } else if (what == "import") {
      import(start);
    } else if (what == "declare" || what == "override" || what == "extend") {
      fail(start, "%" + what + " is not supported");
    } else {
      fail(start, "unknown directive %" + what);
    }
  }

  void import(size_t start) {
    std::vector<std::string> path{name()};
    while (cur() == '.') {
      ++pos_;
      path.push_back(name());
    }
    space(false);
    std::vector<std::string> names;
    std::string alias;
    if (cur() == '(') {
      ++pos_;
      space(true);
      for (;;) {
        names.push_back(name());
        space(true);
        if (cur() == ')') break;
        if (cur() != ',') fail(pos_, "expecting ',' or ')'");
        ++pos_;
        space(true);
      }
      ++pos_;
    } else {
      if (path.size() < 2) fail(start, "%import needs module.NAME or module (NAMES)");
      names.push_back(path.back());
      path.pop_back();
      if (cur() == '-' && at(pos_ + 1) == '>') {
        pos_ += 2;
        space(false);
        alias = name();
      }
    }
    if (path.size() != 1 || path[0] != "common") {
      fail(start, "only %import common is supported: the grammar is compiled from its text alone");
    }
    for (const auto& n : names) {
      const std::string& local = alias.empty() ? n : alias;
      if (!imports.emplace(local, std::pair{n, start}).second) {
        fail(start, "'" + local + "' is imported twice");
      }
    }
  }

  // Alternatives; inside brackets they may span lines, at the top a new
  // line continues them only when it starts with '|'.
  Expr expansions(bool nested) {
    Expr alt{Expr::Kind::kAlt};
    alt.at = pos_;
    alt.kids.push_back(alias(nested));
    for (;;) {
      const size_t save = pos_;
      space(true);
      if (cur() == '|') {
        ++pos_;
        space(nested);
        alt.kids.push_back(alias(nested));
        continue;
      }
      if (!nested) pos_ = save;
      return alt;
    }
  }

  Expr alias(bool nested) {
    Expr seq = sequence(nested);
    if (cur() == '-' && at(pos_ + 1) == '>') {  // a tree alias: the language is the same
      pos_ += 2;
      space(false);
      name();
      space(nested);
    }
    return seq;
  }

  Expr sequence(bool nested) {
    Expr seq{Expr::Kind::kSeq};
    seq.at = pos_;
    for (;;) {
      space(nested);
      const char c = cur();
      if (eof() || c == '|' || c == ')' || c == ']' || c == '\n' || c == '\r' ||
          (c == '-' && at(pos_ + 1) == '>')) {
        return seq;
      }
      Expr item = atom(nested);
      for (;;) {
        space(nested);
        const size_t op = pos_;
        if (cur() == '?' || cur() == '*' || cur() == '+') {
          Expr r{Expr::Kind::kRepeat};
          r.min = cur() == '+' ? 1 : 0;
          r.max = cur() == '?' ? 1 : -1;
          r.at = op;
          ++pos_;
          r.kids.push_back(std::move(item));
          item = std::move(r);
        } else if (cur() == '~') {
          ++pos_;
          space(nested);
          Expr r{Expr::Kind::kRepeat};
          r.at = op;
          r.min = r.max = count();
          if (cur() == '.' && at(pos_ + 1) == '.') {
            pos_ += 2;
            r.max = count();
            if (r.max < r.min) fail(op, "a repetition range out of order");
          }
          r.kids.push_back(std::move(item));
          item = std::move(r);
        } else {
          break;
        }
      }
      seq.kids.push_back(std::move(item));
    }
  }

  long count() {
    const size_t start = pos_;
    long v = 0;
    while (cur() >= '0' && cur() <= '9') {
      v = v * 10 + (cur() - '0');
      if (v > static_cast<long>(kMaxRepetition)) {
        fail(start, "a repetition count above " + std::to_string(kMaxRepetition));
      }
      ++pos_;
    }
    if (pos_ == start) fail(start, "expecting a repetition count");
    return v;
  }

  Expr atom(bool nested) {
    const size_t start = pos_;
    const char c = cur();
    if (c == '"') {
      Expr lit = literal();
      const size_t save = pos_;
      space(nested);
      if (cur() == '.' && at(pos_ + 1) == '.') {
        pos_ += 2;
        space(nested);
        if (cur() != '"') fail(pos_, "expecting a one-character string after '..'");
        const Expr hi = literal();
        Expr r{Expr::Kind::kRange};
        r.at = start;
        r.lo = single(lit, start);
        r.hi = single(hi, start);
        if (r.hi < r.lo) fail(start, "a character range out of order");
        return r;
      }
      pos_ = save;
      return lit;
    }
    if (c == '/' && at(pos_ + 1) != '/') return regex();
    if (c == '(' || c == '[') {
      ++pos_;
      if (++depth_ > 200) fail(start, "brackets nested deeper than 200");
      space(true);
      Expr inner = expansions(true);
      space(true);
      if (cur() != (c == '(' ? ')' : ']')) fail(pos_, c == '(' ? "expecting ')'" : "expecting ']'");
      ++pos_;
      --depth_;
      if (c == '(') return inner;
      Expr r{Expr::Kind::kRepeat};
      r.min = 0;
      r.max = 1;
      r.at = start;
      r.kids.push_back(std::move(inner));
      return r;
    }
    if (name_char(c)) {
      Expr n{Expr::Kind::kName};
      n.at = start;
      n.text = name();
      if (cur() == '{') fail(pos_, "templates are not supported");
      return n;
    }
    fail(start, std::string("unexpected '") + c + "'");
  }

  uint32_t single(const Expr& lit, size_t start) const {
    const auto& t = lit.text;
    const auto b0 = static_cast<uint8_t>(t.empty() ? 0 : t[0]);
    const size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    if (t.empty() || t.size() != len) fail(start, "a range needs one-character strings");
    uint32_t v = len == 1 ? b0 : (b0 & (0x7Fu >> len));
    for (size_t k = 1; k < len; ++k) v = (v << 6) | (static_cast<uint8_t>(t[k]) & 0x3F);
    return v;
  }

  uint32_t hex(size_t digits, size_t start) {
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

  // "..." with Python's escapes (an unknown one stays as written), then
  // the i flag.
  Expr literal() {
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
      switch (e) {
        case 'n':
          lit.text.push_back('\n');
          break;
        case 't':
          lit.text.push_back('\t');
          break;
        case 'r':
          lit.text.push_back('\r');
          break;
        case 'f':
          lit.text.push_back('\f');
          break;
        case 'v':
          lit.text.push_back('\v');
          break;
        case 'a':
          lit.text.push_back('\a');
          break;
        case 'b':
          lit.text.push_back('\b');
          break;
        case '0':
          lit.text.push_back('\0');
          break;
        case '\\':
          lit.text.push_back('\\');
          break;
        case '"':
          lit.text.push_back('"');
          break;
        case '\'':
          lit.text.push_back('\'');
          break;
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

  // /.../flags: the pattern as written, \/ read as /.
  Expr regex() {
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

  std::string_view src_;
  const CfgBuilder& b_;
  size_t pos_ = 0;
  size_t depth_ = 0;
};

// Definitions into the IR.
class Compiler {
 public:
  Compiler(CfgBuilder& b, const Syntax& user, const Syntax& common)
      : b_(b), user_(user), common_(common) {}

  Cfg run() {
    const auto start = user_.defs.find("start");
    if (start == user_.defs.end() || start->second.terminal) {
      b_.fail(0, "the grammar has no 'start' rule");
    }
    if (!user_.ignores.empty()) {
      const uint32_t one = b_.fresh("ignored", 0);
      std::vector<std::vector<Symbol>> alts;
      for (const Expr& e : user_.ignores) {
        std::vector<Symbol> seq;
        compile(e, seq, Scope{false, true});
        alts.push_back(std::move(seq));
      }
      b_.define(one, std::move(alts));
      ignored_ = b_.fresh("ignored_run", 0);
      b_.define(*ignored_, {{static_cast<Symbol>(*ignored_), static_cast<Symbol>(one)}, {}});
    }
    const Symbol body = reference("start", 0, Scope{false, false});
    const uint32_t root = b_.fresh("root", 0);
    std::vector<Symbol> seq{body};
    if (ignored_) seq.push_back(static_cast<Symbol>(*ignored_));
    b_.define(root, {seq});
    b_.cfg().root = root;
    return b_.take();
  }

 private:
  struct Scope {
    bool common = false;    // names resolve in the common module
    bool terminal = false;  // inside a terminal: no ignores, no rules
  };

  // Where a terminal begins inside a rule, the ignored run may stand.
  void lexeme(std::vector<Symbol>& seq, Scope scope) {
    if (ignored_ && !scope.terminal) seq.push_back(static_cast<Symbol>(*ignored_));
  }

  Symbol reference(const std::string& name, size_t at, Scope scope) {
    const Syntax* in = scope.common ? &common_ : &user_;
    std::string key = name;
    bool common = scope.common;
    auto it = in->defs.find(name);
    if (it == in->defs.end() && !scope.common) {
      const auto imp = user_.imports.find(name);
      if (imp != user_.imports.end()) {
        in = &common_;
        it = common_.defs.find(imp->second.first);
        if (it == common_.defs.end()) {
          b_.fail(imp->second.second, "common has no terminal '" + imp->second.first + "'");
        }
        common = true;
        key = imp->second.first;
      }
    }
    if (it == in->defs.end()) {
      b_.fail(at, std::string("undefined ") + (is_terminal_name(name) ? "terminal" : "rule") +
                      " '" + name + "'");
    }
    const Def& d = it->second;
    if (scope.terminal && !d.terminal) {
      b_.fail(at, "a terminal cannot use the rule '" + name + "'");
    }
    const std::string full = (common ? "common." : "") + key;
    const auto done = ids_.find(full);
    if (done != ids_.end()) {
      if (d.terminal && open_.count(full)) b_.fail(at, "the terminal '" + name + "' uses itself");
      return static_cast<Symbol>(done->second);
    }
    const uint32_t id = b_.named(full, at);
    ids_.emplace(full, id);
    open_.insert(full);
    std::vector<std::vector<Symbol>> alts;
    const Scope inner{common, d.terminal};
    if (d.body.kind == Expr::Kind::kAlt) {
      for (const Expr& k : d.body.kids) {
        alts.emplace_back();
        compile(k, alts.back(), inner);
      }
    } else {
      alts.emplace_back();
      compile(d.body, alts.back(), inner);
    }
    b_.define(id, std::move(alts));
    open_.erase(full);
    return static_cast<Symbol>(id);
  }

  void compile(const Expr& e, std::vector<Symbol>& seq, Scope scope) {
    b_.grew(1, e.at);
    switch (e.kind) {
      case Expr::Kind::kSeq:
        for (const Expr& k : e.kids) compile(k, seq, scope);
        return;
      case Expr::Kind::kAlt: {
        if (e.kids.size() == 1) return compile(e.kids[0], seq, scope);
        const uint32_t nt = b_.fresh("group", e.at);
        std::vector<std::vector<Symbol>> alts;
        for (const Expr& k : e.kids) {
          alts.emplace_back();
          compile(k, alts.back(), scope);
        }
        b_.define(nt, std::move(alts));
        seq.push_back(static_cast<Symbol>(nt));
        return;
      }
      case Expr::Kind::kRepeat: {
        const size_t from = seq.size();
        compile(e.kids[0], seq, scope);
        if (seq.size() == from) return;  // repeating the empty string
        b_.repeat(seq, from, e.min, e.max, e.at, "repeat");
        return;
      }
      case Expr::Kind::kName: {
        const Syntax& in = scope.common ? common_ : user_;
        const auto d = in.defs.find(e.text);
        const bool terminal = d != in.defs.end() ? d->second.terminal : is_terminal_name(e.text);
        if (terminal) lexeme(seq, scope);
        seq.push_back(reference(e.text, e.at, scope));
        return;
      }
      case Expr::Kind::kLiteral:
        lexeme(seq, scope);
        if (!e.icase) return b_.bytes(e.text, seq, e.at);
        for (size_t k = 0; k < e.text.size();) {
          const auto b0 = static_cast<uint8_t>(e.text[k]);
          const size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
          uint32_t cp = len == 1 ? b0 : (b0 & (0x7Fu >> len));
          for (size_t j = 1; j < len && k + j < e.text.size(); ++j) {
            cp = (cp << 6) | (static_cast<uint8_t>(e.text[k + j]) & 0x3F);
          }
          seq.push_back(b_.code_class(regex::case_closed({{cp, cp}}), false, e.at));
          k += len;
        }
        return;
      case Expr::Kind::kRange:
        lexeme(seq, scope);
        seq.push_back(b_.code_class({{e.lo, e.hi}}, false, e.at));
        return;
      case Expr::Kind::kRegex: {
        lexeme(seq, scope);
        regex::NodePtr root;
        try {
          root = regex::parse(
              e.text,
              regex::Syntax{
                  .unicode = true, .python = true, .ignore_case = e.icase, .dot_all = e.dotall});
        } catch (const Error& err) {
          throw Error(err.code(), "pattern", b_.where(e.at) + ": " + err.what());
        }
        pattern(*root, seq, e.at);
        return;
      }
    }
  }

  // A regex tree as a sub-grammar of the same language.
  void pattern(const regex::Node& n, std::vector<Symbol>& seq, size_t at) {
    b_.grew(1, at);
    using K = regex::Node::Kind;
    switch (n.kind) {
      case K::kSet:
        seq.push_back(b_.code_class(n.set, false, at));
        return;
      case K::kConcat:
        for (const auto& k : n.kids) pattern(*k, seq, at);
        return;
      case K::kAlt: {
        if (n.kids.size() == 1) return pattern(*n.kids[0], seq, at);
        const uint32_t nt = b_.fresh("regex", at);
        std::vector<std::vector<Symbol>> alts;
        for (const auto& k : n.kids) {
          alts.emplace_back();
          pattern(*k, alts.back(), at);
        }
        b_.define(nt, std::move(alts));
        seq.push_back(static_cast<Symbol>(nt));
        return;
      }
      case K::kRepeat: {
        const size_t from = seq.size();
        pattern(*n.kids[0], seq, at);
        if (seq.size() == from) return;
        b_.repeat(seq, from, n.min, n.max, at, "regex");
        return;
      }
      case K::kEmpty:
        return;
      case K::kInputStart:
      case K::kInputEnd:
        throw Error(ErrorCode::kUnsupported, "pattern",
                    b_.where(at) + ": ^, $, \\A and \\Z are not supported in a Lark terminal");
    }
  }

  CfgBuilder& b_;
  const Syntax& user_;
  const Syntax& common_;
  std::optional<uint32_t> ignored_;
  std::map<std::string, uint32_t> ids_;
  std::set<std::string> open_;
};

}  // namespace

Cfg parse_lark(std::string_view text, const ConstraintLimits& limits) {
  if (text.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "the grammar is " + std::to_string(text.size()) + " bytes; the limit is " +
                    std::to_string(limits.max_schema_bytes));
  }
  CfgBuilder b(text, limits);
  Syntax user(text, b);
  user.run();
  // Read once; its builder only reports syntax errors, which it has none of.
  static const ConstraintLimits none;
  static const CfgBuilder common_errors(kCommon, none);
  static const Syntax common = [] {
    Syntax s(kCommon, common_errors);
    s.run();
    return s;
  }();
  return Compiler(b, user, common).run();
}

}  // namespace nextok::constraint::cfg
