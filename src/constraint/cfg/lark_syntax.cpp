#include "constraint/cfg/lark_syntax.hpp"

#include <algorithm>
#include <optional>

#include "constraint/cfg/lark_dialect.hpp"
#include "constraint/cfg/lark_reader.hpp"
#include "constraint/cfg/lark_templates.hpp"

namespace nextok::constraint::cfg::lark {

bool is_terminal_name(std::string_view n) {
  for (char c : n) {
    if (c != '_') return c >= 'A' && c <= 'Z';
  }
  return false;
}

namespace {

// Lark's grammar syntax into definitions and directives.
class Syntax : Reader {
 public:
  Syntax(std::string_view src, const CfgBuilder& b) : Reader(src, b) {}

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
    Options opts;
    if (cur() == '[') {
      if (is_terminal_name(n)) fail(pos_, "lexeme options go on rules, not on terminals");
      opts = lexeme_options();
    }
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
      Def d;
      d.terminal = is_terminal_name(n);
      d.body = std::move(body);
      d.at = start;
      d.lazy = opts.lazy;
      d.lexeme = opts.lexeme;
      d.suffix = std::move(opts.suffix);
      defs.emplace(n, std::move(d));
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
      Def d;
      d.terminal = d.declared = true;
      d.body = Expr{Expr::Kind::kAlt};
      d.at = d.body.at = at;
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
    if (cur() == '&') {  // llguidance: strings both sides match (terminals only)
      Expr both{Expr::Kind::kAnd};
      both.at = seq.at;
      both.kids.push_back(std::move(seq));
      while (cur() == '&') {
        ++pos_;
        both.kids.push_back(sequence(nested));
      }
      seq = std::move(both);
    }
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
      if (eof() || c == '|' || c == ')' || c == ']' || c == '\n' || c == '\r' || c == '&' ||
          (c == '-' && at(pos_ + 1) == '>')) {
        return seq;
      }
      Expr item;
      if (c == '~') {  // llguidance: the strings the item does not match (terminals only)
        item = Expr{Expr::Kind::kNot};
        item.at = pos_++;
        space(nested);
        item.kids.push_back(atom(nested));
      } else {
        item = atom(nested);
      }
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
        } else if (cur() == '~' && count_follows()) {
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

  // After an item, '~' followed by a number is lark's count; otherwise it
  // negates the next item (llguidance).
  bool count_follows() const {
    size_t k = pos_ + 1;
    while (at(k) == ' ' || at(k) == '\t') ++k;
    return at(k) >= '0' && at(k) <= '9';
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
    // Rules given as a JSON object: a schema, or nextok's embedded GBNF.
    for (const auto& [word, kind] :
         {std::pair{"%json", Expr::Kind::kJson}, std::pair{"%gbnf", Expr::Kind::kGbnf}}) {
      if (c != '%' || src_.substr(pos_, 5) != word || name_char(at(pos_ + 5))) continue;
      pos_ += 5;
      space(true);
      Expr j{kind};
      j.at = start;
      j.text = json_object(start, word);
      return j;
    }
    if (c == '%' && src_.substr(pos_, 6) == "%regex" && !name_char(at(pos_ + 6))) {
      pos_ += 6;
      space(true);
      std::string error;
      Expr sub{Expr::Kind::kSubstring};
      sub.at = start;
      for (auto& chunk : substring_chunks(json_object(start, "%regex"), error)) {
        Expr lit{Expr::Kind::kLiteral};
        lit.at = start;
        lit.text = std::move(chunk);
        sub.kids.push_back(std::move(lit));
      }
      if (!error.empty()) fail(start, error);
      return sub;
    }
    if (c == '<') {  // a token by name, <|eot_id|>, or by ids, <[128000-128255]>
      Expr t{Expr::Kind::kSpecial};
      t.at = start;
      for (++pos_; cur() != '>'; ++pos_) {
        if (eof() || cur() == '\n') fail(start, "unterminated token name (<...>)");
        t.text.push_back(cur());
      }
      ++pos_;
      if (t.text.empty()) fail(start, "an empty token name");
      return t;
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
    const std::string why =
        read_llguidance_options(json_object(start, "%llguidance"), out.llguidance);
    if (!why.empty()) fail(start, why);
  }

  // name[options]: llguidance's lexeme options. capture only names a part
  // of the output; lazy, suffix and stop make the body one lexeme that
  // ends at its first possible end (stop="" one lexeme, not lazy). stop
  // hides its text from llguidance's captures, which token masks do not
  // see, so it reads as suffix (docs/constraint-engine.md, "llguidance's
  // dialect"). max_tokens counts tokens and temperature changes the
  // sampling: errors.
  struct Options {
    bool lazy = false;
    bool lexeme = false;
    std::vector<Expr> suffix;  // empty or one
  };
  Options lexeme_options() {
    Options o;
    list(']', [&] {
      const size_t at_opt = pos_;
      const std::string key = name();
      space(false);
      std::optional<Expr> value;
      if (cur() == '=') {
        ++pos_;
        space(false);
        if (cur() == '"') {
          value = literal();
        } else if (cur() == '/') {
          value = regex();
        } else {
          const size_t v = pos_;
          while (!eof() && cur() != ',' && cur() != ']' && cur() != '\n') ++pos_;
          Expr n{Expr::Kind::kName};
          n.at = v;
          n.text = std::string(src_.substr(v, pos_ - v));
          while (!n.text.empty() && n.text.back() == ' ') n.text.pop_back();
          value = std::move(n);
        }
      }
      if (key == "capture" || key == "stop_capture") return;
      const bool ends = (key == "suffix" || key == "stop") && value;
      if (ends && (!o.suffix.empty() || o.lexeme)) {
        fail(at_opt, "a lexeme takes one stop or suffix");
      }
      if (key == "lazy" && !value) {
        o.lazy = true;
      } else if (ends && key == "stop" && value->kind == Expr::Kind::kLiteral &&
                 value->text.empty()) {
        o.lexeme = true;
      } else if (ends) {
        o.suffix.push_back(std::move(*value));
      } else {
        fail(at_opt, "the lexeme option '" + key +
                         "' is not supported (capture, lazy, stop and suffix are; max_tokens "
                         "counts tokens and temperature changes the sampling)");
      }
      if (o.lexeme && o.lazy) fail(at_opt, "stop=\"\" and lazy cannot be used together");
    });
    return o;
  }

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
