#include "constraint/cfg/lark_syntax.hpp"

#include "constraint/cfg/lark_dialect.hpp"
#include "constraint/cfg/lark_templates.hpp"
#include "vocab/utf8.hpp"

namespace nextok::constraint::cfg::lark {

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

bool is_terminal_name(std::string_view n) {
  for (char c : n) {
    if (c != '_') return c >= 'A' && c <= 'Z';
  }
  return false;
}

namespace {

// Lark's grammar syntax into definitions and directives.
class Syntax {
 public:
  Syntax(std::string_view src, const CfgBuilder& b) : src_(src), b_(b) {}

  Definitions out;
  std::map<std::string, Def, std::less<>>& defs = out.defs;
  std::vector<Expr>& ignores = out.ignores;
  std::map<std::string, std::pair<std::string, size_t>, std::less<>>& imports = out.imports;

  void run() {
    for (;;) {
      blank();
      if (eof()) break;
      if (cur() == '%') {
        directive();
      } else {
        definition();
      }
      end_of_line();
    }
    expand_templates(out, templates_, b_);
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
  std::string name() {
    const size_t start = pos_;
    while (name_char(cur()) ||
           (cur() == '-' && pos_ > start && at(pos_ + 1) != '>' && name_char(at(pos_ + 1))))
      ++pos_;
    if (pos_ == start) fail(start, "expecting a name");
    return std::string(src_.substr(start, pos_ - start));
  }

  // A definition; after %override it replaces one made before, after
  // %extend it adds alternatives to one (lark: both need it defined above).
  enum class Mode { kDefine, kOverride, kExtend };

  void definition(Mode mode = Mode::kDefine) {
    const size_t start = pos_;
    if (cur() == '?' || cur() == '!') ++pos_;
    const std::string n = name();
    std::vector<std::string> params;
    if (cur() == '{') {  // a template: name{param, ...}
      if (is_terminal_name(n)) fail(pos_, "a template must be a rule, not a terminal");
      list('}', [&] { params.push_back(name()); });
    }
    if (cur() == '[') lexeme_options();
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
    Expr body = expansions(false);
    if (mode != Mode::kDefine) return redefine(mode, n, std::move(params), std::move(body), start);
    if (defs.count(n) != 0 || templates_.count(n) != 0) fail(start, "'" + n + "' is defined twice");
    if (!params.empty()) {
      templates_.emplace(n, Template{std::move(params), std::move(body), start});
    } else {
      defs.emplace(n, Def{is_terminal_name(n), std::move(body), start});
    }
  }

  void redefine(Mode mode, const std::string& n, std::vector<std::string> params, Expr body,
                size_t start) {
    const bool extend = mode == Mode::kExtend;
    const auto d = defs.find(n);
    const auto t = templates_.find(n);
    if (d == defs.end() && t == templates_.end()) {
      fail(start,
           std::string(extend ? "%extend" : "%override") + " needs '" + n + "' defined above it");
    }
    if (t != templates_.end() ? params.empty() : !params.empty()) {
      fail(start, "'" + n + "' is " + (params.empty() ? "" : "not ") + "a template");
    }
    Expr& old = d != defs.end() ? d->second.body : t->second.body;
    if (!extend) {
      old = std::move(body);
      if (d != defs.end()) d->second.declared = false;
      if (t != templates_.end()) t->second.params = std::move(params);
      return;
    }
    if (d != defs.end() && d->second.declared) {
      fail(start, "'" + n + "' is only declared: %override gives it a pattern");
    }
    if (t != templates_.end() && t->second.params != params) {
      fail(start, "%extend of the template '" + n + "' needs the same parameters");
    }
    if (old.kind != Expr::Kind::kAlt) {
      Expr alt{Expr::Kind::kAlt};
      alt.at = old.at;
      alt.kids.push_back(std::move(old));
      old = std::move(alt);
    }
    for (Expr& k : body.kids) old.kids.push_back(std::move(k));
  }

  // %declare NAME ...: terminals that a lexer outside the grammar would
  // produce; here nothing does, so each matches no text.
  void declare() {
    do {
      const size_t at = pos_;
      const std::string n = name();
      if (!is_terminal_name(n)) fail(at, "%declare names terminals, not the rule '" + n + "'");
      if (defs.count(n) != 0) fail(at, "'" + n + "' is defined twice");
      Def d{true, Expr{Expr::Kind::kAlt}, at, true};
      d.body.at = at;
      defs.emplace(n, std::move(d));
      space(false);
    } while (name_char(cur()));
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
    } else if (what == "override") {
      definition(Mode::kOverride);
    } else if (what == "extend") {
      definition(Mode::kExtend);
    } else if (what == "declare") {
      declare();
    } else if (what == "llguidance") {
      llguidance_options(start);
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
      list(')', [&] { names.push_back(name()); });
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
        } else if (cur() == '{' && repetition_brace()) {
          Expr r{Expr::Kind::kRepeat};
          r.at = op;
          brace_counts(r);
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
      if (cur() == '{' && !repetition_brace()) {  // a template's use: its arguments are names,
                                                  // strings, regexes, ranges
        list('}', [&] {
          if (cur() == '(' || cur() == '[') fail(pos_, "a template argument is one item");
          n.kids.push_back(atom(true));
        });
      }
      return n;
    }
    if (c == '%' && src_.substr(pos_, 5) == "%json" && !name_char(at(pos_ + 5))) {
      pos_ += 5;
      space(true);
      Expr j{Expr::Kind::kJson};
      j.at = start;
      j.text = json_object(start, "%json");
      return j;
    }
    if (c == '%' && src_.substr(pos_, 6) == "%regex" && !name_char(at(pos_ + 6))) {
      fail(start, "%regex (llguidance's substring patterns) is not supported");
    }
    if (c == '<') {
      fail(start,
           "special tokens (<...>) are not supported: a grammar here constrains text, not token "
           "ids");
    }
    if (c == '@') fail(start, "references to other grammars (@name) are not supported");
    fail(start, std::string("unexpected '") + c + "'");
  }

  bool repetition_brace() const { return is_count_brace(src_, pos_); }
  void brace_counts(Expr& r) {
    const size_t start = pos_++;
    space(false);
    const bool has_min = cur() >= '0' && cur() <= '9';
    r.min = has_min ? count() : 0;
    space(false);
    r.max = r.min;
    if (cur() == ',') {
      ++pos_;
      space(false);
      r.max = cur() >= '0' && cur() <= '9' ? count() : -1;
      space(false);
    }
    if (cur() != '}') fail(pos_, "expecting '}'");
    ++pos_;
    if (r.max >= 0 && r.max < r.min) fail(start, "a repetition range out of order");
  }

  // A JSON object's text from the '{' at pos_ to its matching '}'.
  std::string json_object(size_t start, const char* what) {
    if (cur() != '{') fail(pos_, std::string("expecting a JSON object after ") + what);
    const size_t end = json_object_end(src_, pos_);
    if (end == std::string_view::npos) {
      fail(start, std::string("unterminated JSON object after ") + what);
    }
    std::string text(src_.substr(pos_, end - pos_));
    pos_ = end;
    return text;
  }

  void llguidance_options(size_t start) {
    const std::string why = llguidance_options_error(json_object(start, "%llguidance"));
    if (!why.empty()) fail(start, why);
  }

  // name[options]: llguidance's lexeme options. capture only names a part
  // of the output; the others change the language or the sampling.
  void lexeme_options() {
    list(']', [&] {
      const size_t at_opt = pos_;
      const std::string key = name();
      space(false);
      if (cur() == '=') {
        ++pos_;
        space(false);
        if (cur() == '"') {
          literal();
        } else if (cur() == '/') {
          regex();
        } else {
          while (!eof() && cur() != ',' && cur() != ']' && cur() != '\n') ++pos_;
        }
      }
      if (key != "capture") {
        fail(at_opt, "the lexeme option '" + key + "' is not supported (only capture is)");
      }
    });
  }

  uint32_t single(const Expr& lit, size_t start) const {
    size_t k = 0;
    const uint32_t v = lit.text.empty() ? 0 : vocab::utf8_next(lit.text, k);
    if (lit.text.empty() || k != lit.text.size()) {
      fail(start, "a range needs one-character strings");
    }
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
  Templates templates_;
};

}  // namespace

Definitions read(std::string_view text, const CfgBuilder& b) {
  Syntax s(text, b);
  s.run();
  return std::move(s.out);
}

}  // namespace nextok::constraint::cfg::lark
