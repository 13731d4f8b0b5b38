#include "constraint/cfg/gbnf.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "constraint/cfg/cfg_builder.hpp"

#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
         (c >= '0' && c <= '9');
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

class Parser {
 public:
  Parser(std::string_view src, const ConstraintLimits& limits, const Vocabulary* vocab)
      : src_(src), limits_(limits), vocab_(vocab), b_(src, limits) {}

  Cfg run() {
    space(true);
    while (!eof()) rule();
    const auto& names = b_.cfg().names;
    const auto root = std::find(names.begin(), names.end(), "root");
    if (root == names.end() || !b_.defined(static_cast<uint32_t>(root - names.begin()))) {
      b_.fail(0, "the grammar has no 'root' rule");
    }
    for (uint32_t id = 0; id < names.size(); ++id) {
      if (!b_.defined(id)) b_.fail(b_.first_use(id), "undefined rule '" + names[id] + "'");
    }
    b_.cfg().root = static_cast<uint32_t>(root - names.begin());
    for (const auto& [nt, at] : not_tokens_) {
      if (!repeated_.contains(nt)) {
        fail(at,
             "!<...> alone is one token, which a byte grammar cannot hold apart: only runs of "
             "them, !<...>* and !<...>+, are supported");
      }
    }
    auto& sp = b_.cfg().special_tokens;
    std::sort(sp.begin(), sp.end());
    sp.erase(std::unique(sp.begin(), sp.end()), sp.end());
    return b_.take();
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const { b_.fail(at, what); }
  void grew(size_t symbols) { b_.grew(symbols, pos_); }
  bool eof() const { return pos_ >= src_.size(); }
  char at(size_t k) const { return k < src_.size() ? src_[k] : '\0'; }
  char cur() const { return at(pos_); }

  void space(bool newline_ok) {
    while (!eof()) {
      const char c = cur();
      if (c == '#') {
        while (!eof() && cur() != '\r' && cur() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\r' || c == '\n'))) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string_view name() {
    const size_t start = pos_;
    while (word_char(cur())) ++pos_;
    if (pos_ == start) fail(start, "expecting a rule name");
    return src_.substr(start, pos_ - start);
  }

  void rule() {
    const size_t start = pos_;
    const std::string_view n = name();
    const uint32_t id = b_.named(n, start);
    space(false);
    if (src_.substr(pos_, 3) != "::=") fail(pos_, "expecting ::=");
    pos_ += 3;
    space(true);
    // A second definition replaces the first, as in llama.cpp.
    b_.define(id, alternates(std::string(n), false));
    if (cur() == '\r') {
      pos_ += at(pos_ + 1) == '\n' ? 2 : 1;
    } else if (cur() == '\n') {
      ++pos_;
    } else if (!eof()) {
      fail(pos_, "expecting newline or end of input");
    }
    space(true);
  }

  std::vector<std::vector<Symbol>> alternates(const std::string& rule_name, bool nested) {
    std::vector<std::vector<Symbol>> alts;
    alts.push_back(sequence(rule_name, nested));
    while (cur() == '|') {
      ++pos_;
      space(true);
      alts.push_back(sequence(rule_name, nested));
    }
    return alts;
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    const size_t start = pos_;
    for (size_t k = 0; k < digits; ++k, ++pos_) {
      const char c = cur();
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail(start, "expecting " + std::to_string(digits) + " hex digits");
      }
      v = v * 16 + d;
    }
    return v;
  }

  // One character of a literal or class: an escape, or one UTF-8 sequence.
  uint32_t character() {
    if (eof()) fail(pos_, "unexpected end of input");
    const char c = cur();
    if (c == '\\') {
      const char e = at(pos_ + 1);
      pos_ += 2;
      switch (e) {
        case 'x':
          return hex(2);
        case 'u':
          return hex(4);
        case 'U':
          return hex(8);
        case 't':
          return '\t';
        case 'r':
          return '\r';
        case 'n':
          return '\n';
        case '\\':
        case '"':
        case '[':
        case ']':
          return static_cast<uint8_t>(e);
        default:
          fail(pos_ - 2, "unknown escape");
      }
    }
    const auto b0 = static_cast<uint8_t>(c);
    const int len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    uint32_t v = len == 1 ? b0 : (b0 & (0x7Fu >> len));
    ++pos_;
    for (int k = 1; k < len; ++k) {
      if (eof() || (static_cast<uint8_t>(cur()) & 0xC0) != 0x80) {
        fail(pos_, "invalid UTF-8 in the grammar text");
      }
      v = (v << 6) | (static_cast<uint8_t>(cur()) & 0x3F);
      ++pos_;
    }
    return v;
  }

  long integer() {
    const size_t start = pos_;
    while (digit(cur())) ++pos_;
    if (pos_ == start) fail(start, "expecting an integer");
    if (pos_ - start > 9) fail(start, "a repetition count above " + std::to_string(kMaxRepetition));
    return std::stol(std::string(src_.substr(start, pos_ - start)));
  }

  // <[id]> or <text> (text that is one token of the vocabulary, the
  // brackets included), as llama.cpp reads them.
  uint32_t token_id() {
    const size_t start = pos_;
    if (!vocab_) fail(start, "tokens (<...>) need the grammar's vocabulary");
    ++pos_;  // '<'
    if (cur() == '[') {
      ++pos_;
      const size_t digits = pos_;
      uint64_t id = 0;
      while (digit(cur()) && id <= kMaxSpecialTokenId)
        id = id * 10 + static_cast<uint64_t>(cur() - '0'), ++pos_;
      if (pos_ == digits) fail(pos_, "expecting a token id");
      if (cur() != ']') fail(pos_, "expecting ']'");
      if (at(pos_ + 1) != '>') fail(pos_ + 1, "expecting '>'");
      pos_ += 2;
      if (id >= vocab_->size()) {
        fail(digits, "token " + std::to_string(id) + " is not in the vocabulary (" +
                         std::to_string(vocab_->size()) + " tokens)");
      }
      return static_cast<uint32_t>(id);
    }
    while (!eof() && cur() != '>') ++pos_;
    if (eof()) fail(start, "expecting '>'");
    ++pos_;
    const std::string_view text = src_.substr(start, pos_ - start);
    const auto id = vocab_->find(text);
    if (!id) fail(start, "'" + std::string(text) + "' is not one token of the vocabulary");
    return *id;
  }

  // A special token reads as special_token_bytes; a text token as its text
  // (so its bytes spelled by other tokens too: the byte grammar's reading).
  void token(std::vector<Symbol>& seq, size_t start) {
    const bool negated = cur() == '!';
    if (negated && at(++pos_) != '<') fail(pos_, "expecting '<' after '!'");
    const uint32_t id = token_id();
    if (!negated) {
      if (!vocab_->is_special(id)) return b_.bytes(vocab_->bytes(id), seq, start);
      if (id > kMaxSpecialTokenId) fail(start, "a special token id past 2^24");
      b_.cfg().special_tokens.push_back(id);
      return b_.bytes(special_token_bytes(id), seq, start);
    }
    // Any one token but `id`: any text, or another special token (EOS
    // ends the output instead). Exact for runs of them, where only the
    // text and the special tokens matter, and when `id` is special: a
    // text token's bytes can be spelled by others.
    if (!vocab_->is_special(id)) {
      fail(start,
           "!<...> of a text token is not supported: its text can be spelled by other "
           "tokens, so only special tokens can be left out");
    }
    const uint32_t nt = b_.fresh("not_token", start);
    std::vector<std::vector<Symbol>> alts(1);
    alts[0].push_back(b_.code_class({{0, 0x10FFFF}}, false, start));
    if (!run_specials_) {  // once per grammar, not per !<...>: a scan of the vocabulary
      run_specials_.emplace();
      for (uint32_t s = 0; s < vocab_->size() && s <= kMaxSpecialTokenId; ++s) {
        if (vocab_->is_special(s) && !vocab_->is_eos(s)) run_specials_->push_back(s);
      }
    }
    for (const uint32_t s : *run_specials_) {
      if (s == id) continue;
      b_.cfg().special_tokens.push_back(s);
      b_.bytes(special_token_bytes(s), alts.emplace_back(), start);
    }
    b_.define(nt, std::move(alts));
    seq.push_back(static_cast<Symbol>(nt));
    not_tokens_.emplace_back(nt, start);
  }

  bool is_not_token(uint32_t nt) const {
    return std::any_of(not_tokens_.begin(), not_tokens_.end(),
                       [nt](const auto& x) { return x.first == nt; });
  }
  // Notes seq[from..] read as a run (min 0 or 1, no max: the only use
  // supported) when it is one !<...>, alone or alone in a group.
  void note_run(const std::vector<Symbol>& seq, size_t from, long min, long max) {
    if (min > 1 || max >= 0 || seq.size() != from + 1 || seq[from] < 0) return;
    auto s = static_cast<uint32_t>(seq[from]);
    const auto& alts = b_.cfg().rules[s];
    if (!is_not_token(s) && alts.size() == 1 && alts[0].size() == 1 && alts[0][0] >= 0) {
      s = static_cast<uint32_t>(alts[0][0]);
    }
    if (is_not_token(s)) repeated_.insert(s);
  }

  std::vector<Symbol> sequence(const std::string& rule_name, bool nested) {
    std::vector<Symbol> seq;
    size_t last = 0;  // where the last element starts
    while (!eof()) {
      const char c = cur();
      const size_t start = pos_;
      if (c == '"') {
        ++pos_;
        last = seq.size();
        std::string bytes;
        while (cur() != '"') {
          if (eof()) fail(start, "unterminated literal");
          append_utf8(character(), bytes);
        }
        b_.bytes(bytes, seq, start);
        ++pos_;
        space(nested);
      } else if (c == '[') {
        ++pos_;
        bool negated = false;
        if (cur() == '^') {
          negated = true;
          ++pos_;
        }
        last = seq.size();
        CodeRanges set;
        bool any = false;
        while (cur() != ']') {
          if (eof()) fail(start, "unterminated character class");
          const uint32_t lo = character();
          uint32_t hi = lo;
          if (cur() == '-' && at(pos_ + 1) != ']') {
            ++pos_;
            if (eof()) fail(pos_, "unexpected end of input");
            hi = character();
          }
          set.push_back({lo, hi});
          any = true;
        }
        ++pos_;
        // `[]` adds nothing to the rule in llama.cpp: the same here.
        if (any) seq.push_back(b_.code_class(std::move(set), negated, start));
        grew(1);
        space(nested);
      } else if (word_char(c)) {
        const std::string_view n = name();
        seq.push_back(static_cast<Symbol>(b_.named(n, start)));
        last = seq.size() - 1;
        grew(1);
        space(nested);
      } else if (c == '(') {
        if (++depth_ > limits_.max_schema_depth) {
          fail(pos_, "parentheses nested deeper than " + std::to_string(limits_.max_schema_depth) +
                         " (ConstraintLimits::max_schema_depth)");
        }
        ++pos_;
        space(true);
        const uint32_t sub = b_.fresh(rule_name, pos_);
        auto alts = alternates(rule_name, true);
        b_.cfg().rules[sub] = std::move(alts);
        if (cur() != ')') fail(pos_, "expecting ')'");
        ++pos_;
        --depth_;
        last = seq.size();
        seq.push_back(static_cast<Symbol>(sub));
        grew(1);
        space(nested);
      } else if (c == '<' || c == '!') {
        last = seq.size();
        token(seq, start);
        grew(1);
        space(nested);
      } else if (c == '.') {
        ++pos_;
        last = seq.size();
        seq.push_back(b_.code_class({{0, 0x10FFFF}}, false, start));
        space(nested);
      } else if (c == '*' || c == '+' || c == '?') {
        ++pos_;
        space(nested);
        note_run(seq, last, c == '+' ? 1 : 0, c == '?' ? 1 : -1);
        b_.repeat(seq, last, c == '+' ? 1 : 0, c == '?' ? 1 : -1, start, rule_name);
      } else if (c == '{') {
        ++pos_;
        space(nested);
        if (!digit(cur())) fail(pos_, "expecting an integer");
        const long min = integer();
        space(nested);
        long max = -1;
        if (cur() == '}') {
          max = min;
          ++pos_;
        } else if (cur() == ',') {
          ++pos_;
          space(nested);
          if (digit(cur())) {
            max = integer();
            space(nested);
          }
          if (cur() != '}') fail(pos_, "expecting '}'");
          ++pos_;
        } else {
          fail(pos_, "expecting ',' or '}'");
        }
        space(nested);
        note_run(seq, last, min, max);
        b_.repeat(seq, last, min, max, start, rule_name);
      } else {
        break;
      }
    }
    return seq;
  }

  std::string_view src_;
  const ConstraintLimits& limits_;
  const Vocabulary* vocab_;
  CfgBuilder b_;
  // Each !<...>'s nonterminal and position, and those read as a run.
  std::vector<std::pair<uint32_t, size_t>> not_tokens_;
  std::set<uint32_t> repeated_;
  // The special tokens a run of !<...> may read (all but the EOS), found on
  // first use.
  std::optional<std::vector<uint32_t>> run_specials_;
  size_t pos_ = 0;
  size_t depth_ = 0;
};

}  // namespace

Cfg parse_gbnf(std::string_view text, const ConstraintLimits& limits, const Vocabulary* vocab) {
  if (text.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "the grammar is " + std::to_string(text.size()) + " bytes; the limit is " +
                    std::to_string(limits.max_schema_bytes));
  }
  return Parser(text, limits, vocab).run();
}

}  // namespace nextok::constraint::cfg
