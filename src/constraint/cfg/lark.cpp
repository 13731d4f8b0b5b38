#include "constraint/cfg/lark.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "constraint/cfg/automaton_rules.hpp"
#include "constraint/cfg/cfg_builder.hpp"
#include "constraint/cfg/gbnf.hpp"
#include "constraint/cfg/json_embed.hpp"
#include "constraint/cfg/lark_dialect.hpp"
#include "constraint/cfg/lark_syntax.hpp"
#include "constraint/regex/dfa.hpp"
#include "constraint/regex/regex_parser.hpp"
#include "nextok/error.hpp"
#include "nextok/vocab.hpp"
#include "vocab/utf8.hpp"

namespace nextok::constraint::cfg {

namespace {

using lark::Def;
using lark::Definitions;
using lark::Expr;
using lark::is_terminal_name;

// Definitions into the IR.
class Compiler {
 public:
  Compiler(CfgBuilder& b, const Definitions& user, const Definitions& common,
           const Vocabulary* vocab)
      : b_(b), user_(user), common_(common), vocab_(vocab) {}

  Cfg run() {
    const auto start = user_.defs.find("start");
    if (start == user_.defs.end() || start->second.terminal) {
      b_.fail(0, "the grammar has no 'start' rule");
    }
    if (!user_.ignores.empty()) ignored_runs();
    const Symbol body = reference("start", 0, Scope{false, false});
    const uint32_t root = b_.fresh("root", 0);
    std::vector<Symbol> seq{body};
    if (run_) seq.push_back(static_cast<Symbol>(run_->any_end));
    b_.define(root, {seq});
    b_.cfg().root = root;
    auto& sp = b_.cfg().special_tokens;
    std::sort(sp.begin(), sp.end());
    sp.erase(std::unique(sp.begin(), sp.end()), sp.end());
    return b_.take();
  }

 private:
  struct Scope {
    bool common = false;    // names resolve in the common module
    bool terminal = false;  // inside a terminal: no ignores, no rules
  };

  // A Python-syntax regex's DFA; its errors name the grammar position.
  Dfa python_regex(const std::string& re, size_t at) {
    RegexOptions o;
    o.python = true;
    o.full_match = true;
    o.max_states = b_.limits().max_dfa_states;
    try {
      return Dfa::compile(re, o);
    } catch (const Error& err) {
      throw Error(err.code(), "pattern", b_.where(at) + ": " + err.what());
    }
  }
  Automaton python_dfa(const std::string& re, size_t at) {
    return Automaton::of(python_regex(re, at));
  }

  // Runs of %ignore'd terminals as lark's lexer reads them: each ignored
  // token is its longest match, so it ends only where the next byte cannot
  // continue it (a one-byte reading of re.match's greed, exact for runs of
  // a class and for comments). The runs are one deterministic automaton
  // (within a token, a byte that continues it must; else an ignored token
  // may start), kept apart by the bytes that may follow where they end.
  struct Runs {
    std::vector<ByteSet> follow;  // per group: the bytes that may come next
    std::vector<uint32_t> ends;   // per group: non-empty runs ending so
    uint32_t any_end = 0;         // any run, the empty one included (at the end)
  };

  void ignored_runs() {
    std::string alts;
    for (const Expr& e : user_.ignores) {
      if (!alts.empty()) alts += '|';
      alts += "(?:" + regex_of(e, Scope{false, true}, 0) + ")";
    }
    const size_t at = user_.ignores.front().at;
    const Automaton x = python_dfa(alts, at);
    if (x.start < 0) b_.fail(at, "%ignore matches nothing");
    Automaton run;
    run.states = x.states + 1;  // 0: no token yet; 1 + q: inside a token, at q
    run.start = 0;
    run.next.assign(run.states * 256, -1);
    run.accepting.assign(run.states, 0);
    for (unsigned c = 0; c < 256; ++c) {
      if (const int32_t t = x.at(static_cast<size_t>(x.start), c); t >= 0) run.next[c] = 1 + t;
    }
    // llguidance's ignore_once: no ignored token after another.
    const bool again = !user_.llguidance.ignore_once;
    for (size_t q = 0; q < x.states; ++q) {
      run.accepting[1 + q] = x.accepting[q];
      for (unsigned c = 0; c < 256; ++c) {
        int32_t t = x.at(q, c);
        if (t < 0 && x.accepting[q] && again) t = x.at(static_cast<size_t>(x.start), c);
        if (t >= 0) run.next[(1 + q) * 256 + c] = 1 + t;
      }
    }
    const std::vector<uint32_t> nt = reach(b_, run, at, nullptr);
    Runs r;
    std::vector<std::vector<std::vector<Symbol>>> groups;
    for (size_t q = 0; q < x.states; ++q) {
      if (!x.accepting[q]) continue;
      ByteSet follow;
      for (unsigned c = 0; c < 256; ++c) {
        if (x.at(q, c) < 0) follow.add(static_cast<uint8_t>(c));
      }
      auto g = std::find(r.follow.begin(), r.follow.end(), follow);
      if (g == r.follow.end()) {
        r.follow.push_back(follow);
        groups.emplace_back();
        g = r.follow.end() - 1;
      }
      groups[static_cast<size_t>(g - r.follow.begin())].push_back({static_cast<Symbol>(nt[1 + q])});
    }
    std::vector<std::vector<Symbol>> any{{}};
    for (auto& alts_of : groups) {
      const uint32_t end = b_.fresh("ignored", at);
      b_.define(end, std::move(alts_of));
      r.ends.push_back(end);
      any.push_back({static_cast<Symbol>(end)});
    }
    r.any_end = b_.fresh("ignored", at);
    b_.define(r.any_end, std::move(any));
    run_ = std::move(r);
  }

  // seq[from..] is a terminal of a rule (expression e): with %ignore, one
  // symbol for "no ignored run, the terminal" or "a run ending in group g,
  // the terminal starting with a byte g allows".
  void lexeme(std::vector<Symbol>& seq, size_t from, const Expr& e, Scope scope) {
    if (!run_ || scope.terminal) return;
    const Def* whole = e.kind == Expr::Kind::kName ? built(e.text, scope) : nullptr;
    const bool sub = e.kind == Expr::Kind::kSubstring;
    const std::string key = whole ? "\x01" + e.text
                            : sub ? "\x02" + std::to_string(e.at)
                                  : regex_of(e, scope, 0);
    const auto done = lexemes_.find(key);
    if (done == lexemes_.end()) {
      std::vector<std::vector<Symbol>> alts{
          {seq.begin() + static_cast<ptrdiff_t>(from), seq.end()}};
      const Automaton t = whole ? built_automaton(*whole, scope)
                          : sub ? Automaton::of(and_not_dfa(e, scope))
                                : python_dfa(key, e.at);
      for (size_t g = 0; g < run_->ends.size(); ++g) {
        if (auto f = accepted(b_, t, e.at, &run_->follow[g])) {
          alts.push_back({static_cast<Symbol>(run_->ends[g]), *f});
        }
      }
      const uint32_t w = b_.fresh("lexeme", e.at);
      b_.define(w, std::move(alts));
      lexemes_.emplace(key, w);
    }
    seq.resize(from);
    seq.push_back(static_cast<Symbol>(lexemes_.at(key)));
  }

  // llguidance's lexemes built as automata: a terminal using & or ~, a rule
  // with [lazy], [suffix=X] or [stop=X]. The definition, or null for any
  // other name.
  const Def* built(const std::string& name, Scope scope) {
    const Definitions& in = scope.common ? common_ : user_;
    const auto d = in.defs.find(name);
    if (d == in.defs.end()) return nullptr;
    const Def& def = d->second;
    const bool lexeme = def.lazy || def.lexeme || !def.suffix.empty();
    return lexeme || (def.terminal && uses_and_not(def.body)) ? &def : nullptr;
  }
  static bool uses_and_not(const Expr& e) {
    if (e.kind == Expr::Kind::kAnd || e.kind == Expr::Kind::kNot ||
        e.kind == Expr::Kind::kSubstring)
      return true;
    return std::any_of(e.kids.begin(), e.kids.end(), uses_and_not);
  }
  Automaton built_automaton(const Def& d, Scope scope) {
    const Scope t{scope.common, true};
    if (!d.lazy && d.suffix.empty()) return Automaton::of(and_not_dfa(d.body, t));
    // [lazy] / [suffix=X]: the body (then X) ending at its first possible
    // end, so no accepting state reads on.
    std::string re = regex_of(d.body, t, 0);
    if (!d.suffix.empty()) re = "(?:" + re + ")(?:" + regex_of(d.suffix[0], t, 0) + ")";
    Automaton a = python_dfa(re, d.at);
    for (size_t q = 0; q < a.states; ++q) {
      if (a.accepting[q]) std::fill_n(a.next.begin() + static_cast<ptrdiff_t>(q * 256), 256, -1);
    }
    return a;
  }
  // & and ~ over alternatives of conjunctions of (negated) items.
  Dfa and_not_dfa(const Expr& e, Scope scope) {
    const size_t cap = b_.limits().max_dfa_states;
    switch (e.kind) {
      case Expr::Kind::kAlt:
      case Expr::Kind::kSeq: {
        if (e.kids.size() == 1) return and_not_dfa(e.kids[0], scope);
        if (e.kind == Expr::Kind::kSeq && uses_and_not(e)) {
          b_.fail(e.at, "& and ~ are supported at the top of a terminal, not inside a sequence");
        }
        if (e.kind == Expr::Kind::kSeq) break;
        std::vector<Dfa> parts;
        for (const Expr& k : e.kids) parts.push_back(and_not_dfa(k, scope));
        std::vector<const Dfa*> ptrs;
        for (const Dfa& d : parts) ptrs.push_back(&d);
        return Dfa::unite(ptrs, cap);
      }
      case Expr::Kind::kAnd: {
        Dfa out = and_not_dfa(e.kids[0], scope);
        for (size_t k = 1; k < e.kids.size(); ++k)
          out = Dfa::intersect(out, and_not_dfa(e.kids[k], scope), cap);
        return out;
      }
      case Expr::Kind::kNot: {
        // Any bytes but 0xFF, as llguidance's ~ (intersect with a pattern
        // to keep the text UTF-8).
        std::vector<int32_t> loop(256, 0);
        loop[0xFF] = -1;  // never in UTF-8: special tokens' bytes (cfg.hpp)
        const Dfa any = Dfa::from_table(std::move(loop), {1});
        return Dfa::subtract(any, and_not_dfa(e.kids[0], scope), cap);
      }
      case Expr::Kind::kRepeat:
        if (uses_and_not(e)) b_.fail(e.at, "& and ~ are supported at the top of a terminal");
        break;
      case Expr::Kind::kSubstring: {
        std::vector<std::string> chunks;
        for (const Expr& k : e.kids) chunks.push_back(k.text);
        return lark::substring_dfa(chunks, cap);
      }
      default:
        break;
    }
    return python_regex(regex_of(e, scope, 0), e.at);
  }

  // A terminal expression as a Python-syntax regex of the same language.
  std::string regex_of(const Expr& e, Scope scope, int depth) {
    if (depth > 64) b_.fail(e.at, "a terminal nested more than 64 deep (or using itself)");
    b_.grew(1, e.at);
    const auto code = [](uint32_t cp) {
      char buf[16];
      std::snprintf(buf, sizeof buf, cp < 0x80 ? "\\x%02X" : "\\U%08X", cp);
      return std::string(buf);
    };
    switch (e.kind) {
      case Expr::Kind::kSeq: {
        std::string out;
        for (const Expr& k : e.kids) out += "(?:" + regex_of(k, scope, depth + 1) + ")";
        return out;
      }
      case Expr::Kind::kAlt: {
        std::string out;
        for (const Expr& k : e.kids) {
          out += out.empty() ? "(?:" : "|(?:";
          out += regex_of(k, scope, depth + 1) + ")";
        }
        return out;
      }
      case Expr::Kind::kRepeat: {
        const std::string x = "(?:" + regex_of(e.kids[0], scope, depth + 1) + ")";
        return x + "{" + std::to_string(e.min) + "," + (e.max < 0 ? "" : std::to_string(e.max)) +
               "}";
      }
      case Expr::Kind::kLiteral: {
        std::string out;
        for (char c : e.text) {
          const auto u = static_cast<unsigned char>(c);
          const bool plain = (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
                             (u >= 'A' && u <= 'Z') || u >= 0x80;
          out += plain ? std::string(1, c) : code(u);
        }
        return e.icase ? "(?i:" + out + ")" : out;
      }
      case Expr::Kind::kRange:
        return "[" + code(e.lo) + "-" + code(e.hi) + "]";
      case Expr::Kind::kRegex: {
        std::string flags = std::string(e.icase ? "i" : "") + (e.dotall ? "s" : "");
        return "(?" + flags + ":" + e.text + ")";
      }
      case Expr::Kind::kName: {
        bool common = false;
        const Def& d = resolve(e.text, e.at, scope, common);
        return regex_of(d.body, Scope{common, true}, depth + 1);
      }
      case Expr::Kind::kJson:
        b_.fail(e.at, "%json is a rule: a terminal (or %ignore) cannot use it");
      case Expr::Kind::kGbnf:
        b_.fail(e.at, "%gbnf is a rule: a terminal (or %ignore) cannot use it");
      case Expr::Kind::kAnd:
      case Expr::Kind::kNot:
        b_.fail(e.at, "a terminal built with & or ~ cannot be part of another terminal or %ignore");
      case Expr::Kind::kSpecial:
        b_.fail(e.at, "a token (<...>) cannot be part of a terminal or %ignore");
      case Expr::Kind::kSubstring:
        b_.fail(e.at, "a %regex terminal cannot be part of another terminal or %ignore");
    }
    return {};
  }

  // The definition `name` stands for in `scope` (an import points into
  // common); `common` tells where it was found.
  const Def& resolve(const std::string& name, size_t at, Scope scope, bool& common,
                     std::string* key = nullptr) {
    const Definitions* in = scope.common ? &common_ : &user_;
    common = scope.common;
    if (key) *key = name;
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
        if (key) *key = imp->second.first;
      }
    }
    if (it == in->defs.end()) {
      b_.fail(at, std::string("undefined ") + (is_terminal_name(name) ? "terminal" : "rule") +
                      " '" + name + "'");
    }
    if (scope.terminal && !it->second.terminal) {
      b_.fail(at, "a terminal cannot use the rule '" + name + "'");
    }
    if (scope.terminal && it->second.declared) {
      b_.fail(at, "the declared terminal '" + name +
                      "' has no pattern: only rules may use it (%override gives it one)");
    }
    return it->second;
  }

  Symbol reference(const std::string& name, size_t at, Scope scope) {
    std::string key;
    bool common = false;
    const Def& d = resolve(name, at, scope, common, &key);
    const std::string full = (common ? "common." : "") + key;
    const auto done = ids_.find(full);
    if (done != ids_.end()) {
      if (d.terminal && open_.count(full)) b_.fail(at, "the terminal '" + name + "' uses itself");
      return static_cast<Symbol>(done->second);
    }
    // Each definition compiled inside another is a level of recursion here.
    if (open_.size() >= kMaxOpenDefinitions) {
      b_.fail(at, "definitions refer to each other more than " +
                      std::to_string(kMaxOpenDefinitions) + " deep");
    }
    const uint32_t id = b_.named(full, at);
    ids_.emplace(full, id);
    open_.insert(full);
    std::vector<std::vector<Symbol>> alts;
    const Scope inner{common, d.terminal};
    if (built(name, Scope{common, false}) == &d) {
      if (auto s = accepted(b_, built_automaton(d, inner), d.at, nullptr)) alts.push_back({*s});
    } else if (d.body.kind == Expr::Kind::kAlt) {
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
        const Definitions& in = scope.common ? common_ : user_;
        const auto d = in.defs.find(e.text);
        const bool terminal = d != in.defs.end() ? d->second.terminal : is_terminal_name(e.text);
        const size_t from = seq.size();
        seq.push_back(reference(e.text, e.at, scope));
        // A declared terminal is a rule with no alternatives: nothing to lex.
        const bool lexed = terminal || built(e.text, scope) != nullptr;
        if (lexed && !(d != in.defs.end() && d->second.declared)) lexeme(seq, from, e, scope);
        return;
      }
      case Expr::Kind::kLiteral: {
        const size_t from = seq.size();
        if (!e.icase) {
          b_.bytes(e.text, seq, e.at);
          return lexeme(seq, from, e, scope);
        }
        for (size_t k = 0; k < e.text.size();) {
          const uint32_t cp = vocab::utf8_next(e.text, k);
          seq.push_back(b_.code_class(regex::case_closed({{cp, cp}}), false, e.at));
        }
        return lexeme(seq, from, e, scope);
      }
      case Expr::Kind::kRange: {
        const size_t from = seq.size();
        seq.push_back(b_.code_class({{e.lo, e.hi}}, false, e.at));
        return lexeme(seq, from, e, scope);
      }
      case Expr::Kind::kRegex: {
        const size_t from = seq.size();
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
        return lexeme(seq, from, e, scope);
      }
      case Expr::Kind::kAnd:
      case Expr::Kind::kNot:
        b_.fail(e.at,
                scope.terminal
                    ? "& and ~ are supported at the top of a terminal's definition"
                    : "& and ~ build terminals: use them in an uppercase terminal's definition");
      case Expr::Kind::kSpecial:
        return special(e, seq, scope);
      case Expr::Kind::kSubstring: {
        const size_t from = seq.size();
        if (auto sym = accepted(b_, Automaton::of(and_not_dfa(e, scope)), e.at, nullptr))
          seq.push_back(*sym);
        return lexeme(seq, from, e, scope);
      }
      case Expr::Kind::kJson: {
        if (scope.terminal) b_.fail(e.at, "%json is a rule: a terminal cannot use it");
        auto done = schemas_.find(e.text);
        if (done == schemas_.end())
          done = schemas_.emplace(e.text, embed_json_schema(b_, e.text, e.at, json_cache_)).first;
        seq.push_back(done->second);
        return;
      }
      case Expr::Kind::kGbnf:
        if (scope.terminal) b_.fail(e.at, "%gbnf is a rule: a terminal cannot use it");
        seq.push_back(embed_gbnf(b_, e.text, e.at, vocab_));
        return;
    }
  }

  // <name> or <[ids]> (llguidance): special tokens read as
  // special_token_bytes; a named token that has text (an added token such
  // as Qwen3's <think>) is its text.
  void special(const Expr& e, std::vector<Symbol>& seq, Scope scope) {
    if (scope.terminal) b_.fail(e.at, "a token (<...>) cannot be part of a terminal");
    if (!vocab_) b_.fail(e.at, "tokens (<...>) need the grammar's vocabulary");
    std::vector<uint32_t> ids;
    if (e.text.front() != '[' || e.text.back() != ']') {
      const auto id = vocab_->find("<" + e.text + ">");
      if (!id) b_.fail(e.at, "the vocabulary has no token <" + e.text + ">");
      if (!vocab_->is_special(*id)) {
        Expr lit{Expr::Kind::kLiteral};
        lit.at = e.at;
        lit.text = std::string(vocab_->bytes(*id));
        return compile(lit, seq, scope);
      }
      ids.push_back(*id);
    } else {
      std::string error;
      ids = lark::token_ids(std::string_view(e.text).substr(1, e.text.size() - 2), error);
      if (!error.empty()) b_.fail(e.at, error);
    }
    std::vector<std::vector<Symbol>> alts;
    for (uint32_t id : ids) {
      if (id >= vocab_->size() || !vocab_->is_special(id) || id > kMaxSpecialTokenId) {
        b_.fail(e.at, "token " + std::to_string(id) +
                          " is no special token of this vocabulary: ids name special tokens only");
      }
      b_.cfg().special_tokens.push_back(id);
      alts.emplace_back();
      b_.bytes(special_token_bytes(id), alts.back(), e.at);
    }
    if (alts.size() == 1) {
      seq.insert(seq.end(), alts[0].begin(), alts[0].end());
      return;
    }
    const uint32_t nt = b_.fresh("tokens", e.at);
    b_.define(nt, std::move(alts));
    seq.push_back(static_cast<Symbol>(nt));
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
  const Definitions& user_;
  const Definitions& common_;
  const Vocabulary* vocab_;
  std::optional<Runs> run_;
  std::map<std::string, uint32_t> lexemes_;  // per terminal regex: its lexeme symbol
  std::map<std::string, Symbol> schemas_;    // per %json schema text: its value symbol
  JsonEmbedCache json_cache_;                // what the %json rules share
  std::map<std::string, uint32_t> ids_;
  std::set<std::string> open_;
  static constexpr size_t kMaxOpenDefinitions = 200;
};

}  // namespace

Cfg parse_lark(std::string_view text, const ConstraintLimits& limits, const Vocabulary* vocab) {
  if (text.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "the grammar is " + std::to_string(text.size()) + " bytes; the limit is " +
                    std::to_string(limits.max_schema_bytes));
  }
  CfgBuilder b(text, limits);
  const Definitions user = lark::read(text, b);
  return Compiler(b, user, lark::common(), vocab).run();
}

}  // namespace nextok::constraint::cfg
