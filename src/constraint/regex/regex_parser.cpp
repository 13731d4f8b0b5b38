#include "constraint/regex/regex_parser.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <span>
#include <string>

#include "constraint/regex/unicode_property.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::regex {

CodeSet normalized(CodeSet s) {
  std::sort(s.begin(), s.end());
  CodeSet out;
  for (auto [lo, hi] : s) {
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  return out;
}

namespace {

CodeSet complement(const CodeSet& s) {
  CodeSet out;
  uint32_t next = 0;
  for (auto [lo, hi] : s) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

// ECMA-262 classes.
const CodeSet kDigit = {{'0', '9'}};
const CodeSet kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const CodeSet kSpace = normalized({{'\t', '\r'},
                                   {' ', ' '},
                                   {0xA0, 0xA0},
                                   {0x1680, 0x1680},
                                   {0x2000, 0x200A},
                                   {0x2028, 0x2029},
                                   {0x202F, 0x202F},
                                   {0x205F, 0x205F},
                                   {0x3000, 0x3000},
                                   {0xFEFF, 0xFEFF}});
// Tables generated at build time from utf8proc (unicode_tables_gen.cpp):
// the case classes, and the Unicode-aware \w and \d of Python's and Rust's
// regex engines (supersets of the ECMA ones, for matching that must not miss
// what those engines match).
struct CaseEntry {
  uint32_t cp, first, count;
};
struct CodeRange {
  uint32_t lo, hi;
};
#include "unicode_tables.inc"

CodeSet code_set(std::span<const CodeRange> ranges) {
  CodeSet out;
  out.reserve(ranges.size());
  for (const CodeRange& r : ranges) out.emplace_back(r.lo, r.hi);
  return out;
}

const CodeSet& unicode_word() {
  static const CodeSet set = code_set(kUnicodeWord);
  return set;
}

const CodeSet& unicode_digit() {
  static const CodeSet set = code_set(kUnicodeDigit);
  return set;
}

// Python's str.isspace() (\s in a str pattern).
const CodeSet kPythonSpace = normalized({{'\t', '\r'},
                                         {0x1C, ' '},
                                         {0x85, 0x85},
                                         {0xA0, 0xA0},
                                         {0x1680, 0x1680},
                                         {0x2000, 0x200A},
                                         {0x2028, 0x2029},
                                         {0x202F, 0x202F},
                                         {0x205F, 0x205F},
                                         {0x3000, 0x3000}});

const CodeSet kNotLineTerminator =
    complement(normalized({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));

class Parser {
 public:
  Parser(std::string_view p, const Syntax& syntax)
      : p_(p),
        unicode_(syntax.unicode || syntax.python),
        python_(syntax.python),
        icase_(syntax.ignore_case),
        dotall_(syntax.dot_all) {}

  NodePtr parse() {
    NodePtr n = alternation();
    if (i_ != p_.size()) fail(p_[i_] == ')' ? "unbalanced ')'" : "unexpected character");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorCode::kInvalidArgument, "pattern",
                "pattern \"" + std::string(p_) + "\" at offset " + std::to_string(i_) + ": " + why);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kUnsupported, "pattern",
                "pattern \"" + std::string(p_) + "\" at offset " + std::to_string(i_) + ": " +
                    what + " cannot be compiled to a DFA");
  }
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  uint32_t code_point() {
    const auto b0 = static_cast<uint8_t>(p_[i_]);
    int n = b0 < 0x80 ? 1 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
    if (i_ + static_cast<size_t>(n) > p_.size()) fail("truncated UTF-8");
    uint32_t cp = n == 1 ? b0 : (b0 & (0x7Fu >> n));
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(p_[i_ + k]) & 0x3Fu);
    i_ += static_cast<size_t>(n);
    return cp;
  }

  uint32_t hex(size_t digits) {
    if (i_ + digits > p_.size()) fail("truncated escape");
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      const char c = p_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        fail("bad hex digit");
    }
    return v;
  }

  // After a backslash: a class (returned in `set`) or one code point.
  bool escape(CodeSet& set, uint32_t& cp) {
    if (i_ >= p_.size()) fail("pattern ends with a backslash");
    const char c = p_[i_++];
    switch (c) {
      case 'd':
        set = unicode_ ? unicode_digit() : kDigit;
        return true;
      case 'D':
        set = complement(python_ && unicode_ ? unicode_digit() : kDigit);
        return true;
      case 'w':
        set = unicode_ ? unicode_word() : kWord;
        return true;
      case 'W':
        set = complement(python_ && unicode_ ? unicode_word() : kWord);
        return true;
      case 's':
        if (python_) {
          set = unicode_ ? kPythonSpace : CodeSet{{'\t', '\r'}, {' ', ' '}};
          return true;
        }
        set = unicode_ ? normalized([] {
          CodeSet u = kSpace;
          u.emplace_back(0x1C, 0x1F);
          u.emplace_back(0x85, 0x85);
          return u;
        }())
                       : kSpace;
        return true;
      case 'S':
        set = complement(python_ ? (unicode_ ? kPythonSpace : CodeSet{{'\t', '\r'}, {' ', ' '}})
                                 : kSpace);
        return true;
      case 'a':
        if (!python_) fail("unknown escape \\a");
        cp = 7;
        return false;
      case 'U':
        if (!python_) fail("unknown escape \\U");
        cp = hex(8);
        if (cp > kMaxCodePoint) fail("code point out of range");
        return false;
      case 'n':
        cp = '\n';
        return false;
      case 'r':
        cp = '\r';
        return false;
      case 't':
        cp = '\t';
        return false;
      case 'f':
        cp = '\f';
        return false;
      case 'v':
        cp = '\v';
        return false;
      case '0':
        cp = 0;
        return false;
      case 'x':
      case 'u':
        // \u{...} is ECMA's u-mode escape; with python, \x{...} and \u{...}
        // are Rust's (llguidance reads Lark terminals as Rust regexes), which
        // Python's re refuses, so no Python pattern changes meaning.
        if (at('{') && (c == 'u' || python_)) {
          ++i_;
          size_t n = 0;
          while (i_ + n < p_.size() && p_[i_ + n] != '}') ++n;
          if (n == 0 || n > 6 || i_ + n >= p_.size())
            fail(std::string("bad \\") + c + "{...} escape");
          cp = hex(n);
          ++i_;
        } else {
          cp = hex(c == 'x' ? 2 : 4);
        }
        if (cp > kMaxCodePoint) fail("code point out of range");
        return false;
      case 'b':
      case 'B':
        unsupported("a word boundary");
      case 'p':
      case 'P': {
        // ECMA-262's u-mode reading, which validators of `pattern` use (and
        // Rust's and Python's `regex`). Python's `re` has no such classes;
        // with python they are Rust's, as llguidance reads Lark terminals
        // (and \pL, one letter without braces, too).
        std::string_view name;
        if (python_ && i_ < p_.size() && p_[i_] != '{') {
          name = p_.substr(i_++, 1);
        } else {
          if (!at('{')) fail(std::string("\\") + c + " needs a {name}");
          const size_t close = p_.find('}', i_);
          if (close == std::string_view::npos) fail("unterminated property name");
          name = p_.substr(i_ + 1, close - i_ - 1);
          i_ = close + 1;
        }
        auto found = unicode_property(name);
        if (!found) unsupported("the Unicode property \"" + std::string(name) + "\"");
        set = c == 'p' ? std::move(*found) : complement(*found);
        return true;
      }
      default:
        if ((c >= '1' && c <= '9') || (c == 'k' && at('<'))) unsupported("a backreference");
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
          fail(std::string("unknown escape \\") + c);
        --i_;
        cp = code_point();
        return false;
    }
  }

  NodePtr klass() {
    ++i_;  // [
    const bool negate = at('^');
    if (negate) ++i_;
    CodeSet set;
    // ECMA-262: "[]" is the empty class and "[^]" any code point.
    while (i_ < p_.size() && !at(']')) {
      CodeSet sub;
      uint32_t lo;
      bool is_set = false;
      if (at('\\')) {
        ++i_;
        is_set = escape(sub, lo);
      } else {
        lo = code_point();
      }
      if (is_set) {
        set.insert(set.end(), sub.begin(), sub.end());
        continue;
      }
      uint32_t hi = lo;
      if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        if (at('\\')) {
          ++i_;
          if (escape(sub, hi)) fail("a class cannot end a range");
        } else {
          hi = code_point();
        }
        if (hi < lo) fail("range out of order");
      }
      set.emplace_back(lo, hi);
    }
    if (!at(']')) fail("unterminated character class");
    ++i_;
    auto n = make(Node::kSet);
    n->set = normalized(set);
    if (icase_) n->set = case_closed(n->set);
    if (negate) n->set = complement(n->set);
    return n;
  }

  NodePtr atom() {
    const char c = p_[i_];
    if (c == '(') {
      ++i_;
      const bool icase = icase_, dotall = dotall_, unicode = unicode_;
      if (at('?')) {
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          i_ += 2;
        } else if (!python_ && i_ == 1 && p_.substr(1, 3) == "?i)") {
          // A leading (?i) is no ECMA-262 syntax; schemas written for
          // Python validators use it as re does: the whole pattern ignores case.
          i_ += 3;
          icase_ = true;
          return make(Node::kConcat);
        } else if (!python_ && ecma_named_group()) {
          // (?<name>...): the name only labels a capture; the language is the body's.
        } else if (!python_) {
          unsupported("lookaround");
        } else if (python_group()) {
          return make(Node::kConcat);  // (?flags): applies from here on
        }
      }
      // The parse and every later walk of the tree recurse once a group.
      if (++depth_ > kMaxGroupDepth) fail("groups nested deeper than 1000");
      NodePtr n = alternation();
      --depth_;
      if (!at(')')) fail("missing ')'");
      ++i_;
      icase_ = icase, dotall_ = dotall, unicode_ = unicode;  // (?flags:...) ends here
      return n;
    }
    if (c == '[') return klass();
    if (c == '^' || c == '$') {
      ++i_;
      return make(c == '^' ? Node::kInputStart : Node::kInputEnd);
    }
    // \A and \Z anchor as in Python; ECMA-262 (u mode) has no such escapes.
    if (c == '\\' && i_ + 1 < p_.size() && (p_[i_ + 1] == 'A' || p_[i_ + 1] == 'Z')) {
      i_ += 2;
      return make(p_[i_ - 1] == 'A' ? Node::kInputStart : Node::kInputEnd);
    }
    auto n = make(Node::kSet);
    if (c == '.') {
      ++i_;
      n->set = dotall_   ? CodeSet{{0, kMaxCodePoint}}
               : python_ ? complement({{'\n', '\n'}})
                         : kNotLineTerminator;
      return n;
    } else if (c == '\\') {
      ++i_;
      uint32_t cp;
      if (!escape(n->set, cp)) n->set = {{cp, cp}};
    } else if (c == '*' || c == '+' || c == '?') {
      fail("nothing to repeat");
    } else {
      const uint32_t cp = code_point();
      n->set = {{cp, cp}};
    }
    if (icase_) n->set = case_closed(n->set);
    return n;
  }

  // At "?<name>" (ECMA-262 2018): consumes it. Lookbehind "?<=" / "?<!" is not one.
  bool ecma_named_group() {
    if (i_ + 2 >= p_.size() || p_[i_ + 1] != '<' || p_[i_ + 2] == '=' || p_[i_ + 2] == '!')
      return false;
    const size_t end = p_.find('>', i_);
    if (end == std::string_view::npos || end == i_ + 2) fail("bad named group");
    for (size_t k = i_ + 2; k < end; ++k) {
      const unsigned char c = static_cast<unsigned char>(p_[k]);
      if (!(std::isalnum(c) || c == '_' || c == '$' || c >= 0x80)) fail("bad group name");
    }
    i_ = end + 1;
    return true;
  }

  // After "(?" in Python syntax: a named group (its body follows; false),
  // inline flags "(?aimsux)" (consumed; true) or scoped ones "(?i-s:"
  // (set until the group's ')'; false).
  bool python_group() {
    ++i_;  // ?
    if (at('P') && i_ + 1 < p_.size() && p_[i_ + 1] == '<') {
      const size_t end = p_.find('>', i_);
      if (end == std::string_view::npos || end == i_ + 2) fail("bad named group");
      i_ = end + 1;
      return false;
    }
    if (at('P') && i_ + 1 < p_.size() && p_[i_ + 1] == '=') unsupported("a backreference");
    if (at('#')) {
      const size_t end = p_.find(')', i_);
      if (end == std::string_view::npos) fail("unterminated comment");
      i_ = end + 1;
      return true;
    }
    bool on = true, any = false;
    while (i_ < p_.size() && !at(')') && !at(':')) {
      const char f = p_[i_++];
      any = true;
      if (f == '-' && on) {
        on = false;
      } else if (f == 'i') {
        icase_ = on;
      } else if (f == 's') {
        dotall_ = on;
      } else if (f == 'a') {
        unicode_ = !on;
      } else if (f == 'u') {
        unicode_ = on;
      } else if (f == 'm' || f == 'x' || f == 'L') {
        unsupported(std::string("the regex flag ") + f);
      } else {
        --i_;
        unsupported("lookaround");
      }
    }
    if (!any || i_ >= p_.size()) fail("bad group");
    if (at(')')) {
      if (!on) fail("bad inline flags");
      ++i_;
      return true;
    }
    ++i_;  // :
    return false;
  }

  bool number(int& out) {
    size_t s = i_;
    long v = 0;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      v = v * 10 + (p_[i_++] - '0');
      if (v > 100000) fail("repetition count too large");
    }
    out = static_cast<int>(v);
    return i_ > s;
  }

  // Whether p_[i_..] begins a quantifier (a '{' that is no count is a
  // literal, as in ECMA's Annex B).
  bool at_quantifier() {
    if (at('*') || at('+') || at('?')) return true;
    if (!at('{')) return false;
    const size_t save = i_++;
    int n = 0;
    const bool count = (python_ && at(',')) || number(n);
    i_ = save;
    return count;
  }

  NodePtr repeat() {
    NodePtr a = atom();
    // One quantifier an atom: ECMA-262 has no other ("nothing to repeat"),
    // and Python reads `a++` as possessive, which a DFA of the greedy
    // language would not be.
    for (bool quantified = false; i_ < p_.size(); quantified = true) {
      if (quantified && at_quantifier()) {
        fail(!python_  ? "nothing to repeat: a quantifier follows another"
             : at('+') ? "possessive quantifiers (a++, a*+) are not supported"
                       : "multiple repeat: a quantifier follows another");
      }
      int lo, hi;
      const char c = p_[i_];
      if (c == '*') {
        lo = 0, hi = -1, ++i_;
      } else if (c == '+') {
        lo = 1, hi = -1, ++i_;
      } else if (c == '?') {
        lo = 0, hi = 1, ++i_;
      } else if (c == '{') {
        const size_t save = i_++;
        if (python_ && at(',')) {
          lo = 0;  // Python's {,n}
        } else if (!number(lo)) {
          i_ = save;  // a literal '{' as in ECMA's Annex B
          break;
        }
        hi = lo;
        if (at(',')) {
          ++i_;
          if (!number(hi)) hi = -1;
        }
        if (!at('}')) fail("bad repetition");
        ++i_;
        if (hi >= 0 && hi < lo) fail("repetition range out of order");
      } else {
        break;
      }
      // ECMA-262 does not quantify ^ and $ (a group around them it does).
      if (a->kind == Node::kInputStart || a->kind == Node::kInputEnd) fail("nothing to repeat");
      if (at('?')) ++i_;  // lazy: the same language
      auto r = make(Node::kRepeat);
      r->min = lo;
      r->max = hi;
      r->kids.push_back(std::move(a));
      a = std::move(r);
    }
    return a;
  }

  NodePtr concat() {
    auto n = make(Node::kConcat);
    while (i_ < p_.size() && !at('|') && !at(')')) {
      n->kids.push_back(repeat());
    }
    return n;
  }

  NodePtr alternation() {
    auto n = make(Node::kAlt);
    n->kids.push_back(concat());
    while (at('|')) {
      ++i_;
      n->kids.push_back(concat());
    }
    return n;
  }

  std::string_view p_;
  bool unicode_ = false;
  bool python_ = false;
  bool icase_ = false;
  bool dotall_ = false;
  size_t i_ = 0;
  size_t depth_ = 0;
  static constexpr size_t kMaxGroupDepth = 1000;
};

}  // namespace

NodePtr make(Node::Kind k) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  return n;
}

NodePtr parse(std::string_view pattern, const Syntax& syntax) {
  return Parser(pattern, syntax).parse();
}

CodeSet case_closed(const CodeSet& set) {
  CodeSet out = set;
  // The table is sorted by code point: each range's cased members are one
  // run of it.
  const auto* end = std::end(kCaseEntries);
  for (const auto& [lo, hi] : set) {
    const auto* it = std::lower_bound(std::begin(kCaseEntries), end, lo,
                                      [](const CaseEntry& e, uint32_t cp) { return e.cp < cp; });
    for (; it != end && it->cp <= hi; ++it)
      for (uint32_t k = 0; k < it->count; ++k)
        out.emplace_back(kCaseMembers[it->first + k], kCaseMembers[it->first + k]);
  }
  return normalized(std::move(out));
}

}  // namespace nextok::constraint::regex
