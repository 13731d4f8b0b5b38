#include "constraint/cfg/gbnf.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "constraint/regex/utf8_ranges.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

using CodeRanges = std::vector<std::pair<uint32_t, uint32_t>>;

uint32_t add_code_point_class(Cfg& g, const CodeRanges& set, std::string name) {
  const uint32_t nt = g.add_nonterminal(std::move(name));
  std::vector<std::vector<ByteRange>> seqs;
  for (auto [lo, hi] : set) utf8_sequences(lo, hi, seqs);
  std::vector<std::vector<Symbol>> alts;
  for (const auto& seq : seqs) {
    std::vector<Symbol> body;
    for (ByteRange r : seq) {
      ByteSet s;
      s.add_range(r.lo, r.hi);
      body.push_back(g.terminal(s));
    }
    alts.push_back(std::move(body));
  }
  g.rules[nt] = std::move(alts);
  return nt;
}

namespace {

// llama.cpp refuses repetition counts above this (MAX_REPETITION_THRESHOLD).
constexpr unsigned long kMaxRepetition = 2000;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || (c >= '0' && c <= '9');
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

void append_utf8(uint32_t cp, std::vector<uint8_t>& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<uint8_t>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<uint8_t>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<uint8_t>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<uint8_t>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3F)));
  }
}

class Parser {
 public:
  Parser(std::string_view src, const ConstraintLimits& limits)
      : src_(src), limits_(limits), t0_(std::chrono::steady_clock::now()) {}

  Cfg run() {
    space(true);
    while (!eof()) rule();
    const auto root = ids_.find("root");
    if (root == ids_.end() || !defined_[root->second]) fail(0, "the grammar has no 'root' rule");
    for (size_t id = 0; id < defined_.size(); ++id) {
      if (!defined_[id]) {
        fail(first_use_[id], "undefined rule '" + g_.names[id] + "'");
      }
    }
    g_.root = root->second;
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < at && k < src_.size(); ++k) {
      if (src_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                std::to_string(line) + ":" + std::to_string(col) + ": " + what);
  }
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

  void grew(size_t symbols) {
    size_ += symbols;
    if (size_ > limits_.max_grammar_nodes) {
      fail(pos_, "the grammar exceeds " + std::to_string(limits_.max_grammar_nodes) +
                     " symbols (ConstraintLimits::max_grammar_nodes)");
    }
    if ((++ticks_ & 255) == 0) {
      if (limits_.cancel && limits_.cancel->load(std::memory_order_relaxed)) {
        throw Error(ErrorCode::kInvalidArgument, "cancelled", "the grammar compile was cancelled");
      }
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t0_)
                          .count();
      if (limits_.max_compile_ms && ms > limits_.max_compile_ms) {
        fail(pos_, "compiling the grammar took over " + std::to_string(limits_.max_compile_ms) +
                       " ms (ConstraintLimits::max_compile_ms)");
      }
    }
  }

  uint32_t symbol_id(std::string_view name, size_t at) {
    auto [it, fresh] = ids_.emplace(std::string(name), static_cast<uint32_t>(g_.names.size()));
    if (fresh) {
      g_.add_nonterminal(std::string(name));
      defined_.push_back(0);
      first_use_.push_back(at);
    }
    return it->second;
  }
  uint32_t fresh_rule(const std::string& base) {
    const uint32_t id = g_.add_nonterminal(base + "_" + std::to_string(g_.names.size()));
    defined_.push_back(1);
    first_use_.push_back(pos_);
    return id;
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
    const uint32_t id = symbol_id(n, start);
    space(false);
    if (src_.substr(pos_, 3) != "::=") fail(pos_, "expecting ::=");
    pos_ += 3;
    space(true);
    // A second definition replaces the first, as in llama.cpp.
    g_.rules[id] = alternates(std::string(n), false);
    defined_[id] = 1;
    if (cur() == '\r') {
      pos_ += at(pos_ + 1) == '\n' ? 2 : 1;
    } else if (cur() == '\n') {
      ++pos_;
    } else if (!eof()) {
      if (cur() == '<' || cur() == '!') fail(pos_, "token references (<...>) are not supported");
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

  Symbol code_class(CodeRanges set, bool negated) {
    std::sort(set.begin(), set.end());
    CodeRanges merged;
    for (auto r : set) {
      if (r.first > r.second) continue;  // [z-a] matches nothing, as in llama.cpp
      if (!merged.empty() && r.first <= merged.back().second + 1) {
        merged.back().second = std::max(merged.back().second, r.second);
      } else {
        merged.push_back(r);
      }
    }
    if (negated) {
      CodeRanges inv;
      uint32_t next = 0;
      for (auto [lo, hi] : merged) {
        if (lo > next) inv.push_back({next, lo - 1});
        next = hi + 1;
      }
      if (next <= 0x10FFFF) inv.push_back({next, 0x10FFFF});
      merged = std::move(inv);
    }
    for (auto& r : merged) r.second = std::min<uint32_t>(r.second, 0x10FFFF);
    std::erase_if(merged, [](auto r) { return r.first > 0x10FFFF; });
    // ASCII-only classes are one terminal; others a nonterminal of UTF-8
    // sequences, shared by every class with the same code points.
    if (!merged.empty() && merged.back().second < 0x80) {
      ByteSet s;
      for (auto [lo, hi] : merged) s.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
      return g_.terminal(s);
    }
    if (merged.empty()) return g_.terminal(ByteSet{});  // no character: pruned later
    auto it = classes_.find(merged);
    if (it != classes_.end()) return static_cast<Symbol>(it->second);
    const uint32_t nt =
        add_code_point_class(g_, merged, "char_class_" + std::to_string(classes_.size()));
    defined_.push_back(1);
    first_use_.push_back(pos_);
    grew(g_.rules[nt].size() * 4);
    classes_.emplace(std::move(merged), nt);
    return static_cast<Symbol>(nt);
  }

  // The element seq[from..] as one symbol.
  Symbol as_symbol(std::vector<Symbol>& seq, size_t from, const std::string& rule_name) {
    if (seq.size() - from == 1) return seq[from];
    const uint32_t nt = fresh_rule(rule_name);
    g_.rules[nt] = {std::vector<Symbol>(seq.begin() + static_cast<ptrdiff_t>(from), seq.end())};
    grew(seq.size() - from + 1);
    return static_cast<Symbol>(nt);
  }

  // x{min,max} (max < 0: unbounded) in place of seq[from..]. Unbounded
  // tails are left-recursive (S ::= S x | empty), which keeps Earley sets
  // small however long the repetition runs; bounded tails nest like
  // llama.cpp's (O_k ::= x O_(k-1) | empty).
  void repeat(std::vector<Symbol>& seq, size_t from, long min, long max, size_t at,
              const std::string& rule_name) {
    if (from == seq.size()) fail(at, "expecting an item before a repetition operator");
    if (static_cast<unsigned long>(min) > kMaxRepetition ||
        (max > 0 && static_cast<unsigned long>(max) > kMaxRepetition)) {
      fail(at, "a repetition count above " + std::to_string(kMaxRepetition));
    }
    const Symbol x = as_symbol(seq, from, rule_name);
    seq.resize(from);
    for (long k = 0; k < min; ++k) seq.push_back(x);
    grew(static_cast<size_t>(min));
    if (max < 0) {
      const uint32_t star = fresh_rule(rule_name);
      g_.rules[star] = {{static_cast<Symbol>(star), x}, {}};
      grew(4);
      seq.push_back(static_cast<Symbol>(star));
    } else if (max > min) {
      Symbol tail = 0;
      for (long k = 0; k < max - min; ++k) {
        const uint32_t opt = fresh_rule(rule_name);
        g_.rules[opt] = k == 0 ? std::vector<std::vector<Symbol>>{{x}, {}}
                               : std::vector<std::vector<Symbol>>{{x, tail}, {}};
        grew(4);
        tail = static_cast<Symbol>(opt);
      }
      seq.push_back(tail);
    }
  }

  long integer() {
    const size_t start = pos_;
    while (digit(cur())) ++pos_;
    if (pos_ == start) fail(start, "expecting an integer");
    if (pos_ - start > 9) fail(start, "a repetition count above " + std::to_string(kMaxRepetition));
    return std::stol(std::string(src_.substr(start, pos_ - start)));
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
        std::vector<uint8_t> bytes;
        while (cur() != '"') {
          if (eof()) fail(start, "unterminated literal");
          append_utf8(character(), bytes);
        }
        for (uint8_t b : bytes) seq.push_back(g_.byte(b));
        grew(bytes.size());
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
        if (any) seq.push_back(code_class(std::move(set), negated));
        grew(1);
        space(nested);
      } else if (word_char(c)) {
        const std::string_view n = name();
        seq.push_back(static_cast<Symbol>(symbol_id(n, start)));
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
        const uint32_t sub = fresh_rule(rule_name);
        auto alts = alternates(rule_name, true);
        g_.rules[sub] = std::move(alts);
        if (cur() != ')') fail(pos_, "expecting ')'");
        ++pos_;
        --depth_;
        last = seq.size();
        seq.push_back(static_cast<Symbol>(sub));
        grew(1);
        space(nested);
      } else if (c == '.') {
        ++pos_;
        last = seq.size();
        seq.push_back(code_class({{0, 0x10FFFF}}, false));
        space(nested);
      } else if (c == '*' || c == '+' || c == '?') {
        ++pos_;
        space(nested);
        repeat(seq, last, c == '+' ? 1 : 0, c == '?' ? 1 : -1, start, rule_name);
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
        repeat(seq, last, min, max, start, rule_name);
      } else {
        break;
      }
    }
    return seq;
  }

  std::string_view src_;
  const ConstraintLimits& limits_;
  std::chrono::steady_clock::time_point t0_;
  size_t pos_ = 0;
  size_t size_ = 0;
  size_t ticks_ = 0;
  size_t depth_ = 0;
  Cfg g_;
  std::map<std::string, uint32_t, std::less<>> ids_;
  std::vector<uint8_t> defined_;
  std::vector<size_t> first_use_;
  std::map<CodeRanges, uint32_t> classes_;
};

}  // namespace

Cfg parse_gbnf(std::string_view text, const ConstraintLimits& limits) {
  if (text.size() > limits.max_schema_bytes) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "the grammar is " + std::to_string(text.size()) + " bytes; the limit is " +
                    std::to_string(limits.max_schema_bytes));
  }
  return Parser(text, limits).run();
}

}  // namespace nextok::constraint::cfg
