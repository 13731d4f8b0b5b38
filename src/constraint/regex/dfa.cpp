#include "constraint/regex/dfa.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <utf8proc.h>

#include "constraint/regex/utf8_ranges.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr size_t kMaxNfaStates = 200000;

// A set of code points as sorted, disjoint, inclusive ranges.
using CodeSet = std::vector<std::pair<uint32_t, uint32_t>>;

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
// Unicode-aware classes (Python's and Rust's regex engines): supersets of
// the ECMA ones, for matching that must not miss what those engines match.
const CodeSet& unicode_word() {
  static const CodeSet set = [] {
    CodeSet out = {{'_', '_'}};
    for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
      switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
        case UTF8PROC_CATEGORY_LU:
        case UTF8PROC_CATEGORY_LL:
        case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM:
        case UTF8PROC_CATEGORY_LO:
        case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL:
        case UTF8PROC_CATEGORY_NO:
          out.emplace_back(cp, cp);
          break;
        default:
          break;
      }
    }
    return normalized(std::move(out));
  }();
  return set;
}

const CodeSet& unicode_digit() {
  static const CodeSet set = [] {
    CodeSet out;
    for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
      if (utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_ND)
        out.emplace_back(cp, cp);
    }
    return normalized(std::move(out));
  }();
  return set;
}

const CodeSet kNotLineTerminator =
    complement(normalized({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));

// Regex AST.
struct Node {
  enum Kind { kSet, kConcat, kAlt, kRepeat, kEmpty } kind;
  CodeSet set;
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = 0;  // kRepeat; max < 0 = unbounded
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make(Node::Kind k) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  return n;
}

class Parser {
 public:
  explicit Parser(std::string_view p, bool unicode = false) : p_(p), unicode_(unicode) {}

  NodePtr parse(bool& anchored_start, bool& anchored_end) {
    anchored_start = i_ < p_.size() && p_[i_] == '^';
    if (anchored_start) ++i_;
    NodePtr n = alternation();
    anchored_end = false;
    if (i_ < p_.size() && p_[i_] == '$' && i_ + 1 == p_.size()) {
      anchored_end = true;
      ++i_;
    }
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
        set = complement(kDigit);
        return true;
      case 'w':
        set = unicode_ ? unicode_word() : kWord;
        return true;
      case 'W':
        set = complement(kWord);
        return true;
      case 's':
        set = unicode_ ? normalized([] {
          CodeSet u = kSpace;
          u.emplace_back(0x1C, 0x1F);
          u.emplace_back(0x85, 0x85);
          return u;
        }())
                       : kSpace;
        return true;
      case 'S':
        set = complement(kSpace);
        return true;
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
        cp = hex(2);
        return false;
      case 'u':
        if (at('{')) {
          ++i_;
          size_t n = 0;
          while (i_ + n < p_.size() && p_[i_ + n] != '}') ++n;
          if (n == 0 || n > 6 || i_ + n >= p_.size()) fail("bad \\u{...} escape");
          cp = hex(n);
          ++i_;
        } else {
          cp = hex(4);
        }
        if (cp > kMaxCodePoint) fail("code point out of range");
        return false;
      case 'b':
      case 'B':
        unsupported("a word boundary");
      case 'p':
      case 'P':
        unsupported("a Unicode property class");
      default:
        if (c >= '1' && c <= '9') unsupported("a backreference");
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
    if (negate) n->set = complement(n->set);
    return n;
  }

  NodePtr atom() {
    const char c = p_[i_];
    if (c == '(') {
      ++i_;
      if (at('?')) {
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          i_ += 2;
        } else {
          unsupported("lookaround or a named group");
        }
      }
      NodePtr n = alternation();
      if (!at(')')) fail("missing ')'");
      ++i_;
      return n;
    }
    if (c == '[') return klass();
    auto n = make(Node::kSet);
    if (c == '.') {
      ++i_;
      n->set = kNotLineTerminator;
    } else if (c == '\\') {
      ++i_;
      uint32_t cp;
      if (!escape(n->set, cp)) n->set = {{cp, cp}};
    } else if (c == '^' || c == '$') {
      unsupported("an anchor inside the pattern");
    } else if (c == '*' || c == '+' || c == '?') {
      fail("nothing to repeat");
    } else {
      const uint32_t cp = code_point();
      n->set = {{cp, cp}};
    }
    return n;
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

  NodePtr repeat() {
    NodePtr a = atom();
    while (i_ < p_.size()) {
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
        if (!number(lo)) {
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
    while (i_ < p_.size() && !at('|') && !at(')') && !(at('$') && i_ + 1 == p_.size())) {
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
  size_t i_ = 0;
};

// Thompson NFA over bytes.
struct Nfa {
  struct Edge {
    uint8_t lo, hi;
    uint32_t to;
  };
  std::vector<std::vector<Edge>> edges;
  std::vector<std::vector<uint32_t>> eps;
  bool json_string = false;  // sets read JSON string content (see RegexOptions)
  bool canonical = false;    // no \\uXXXX spellings of printable characters

  // A chain of fresh states from s to e reading one byte range each.
  void path(uint32_t s, uint32_t e, const std::vector<ByteRange>& seq) {
    uint32_t cur = s;
    for (size_t k = 0; k < seq.size(); ++k) {
      const uint32_t to = k + 1 == seq.size() ? e : add();
      edges[cur].push_back({seq[k].lo, seq[k].hi, to});
      cur = to;
    }
  }

  uint32_t add() {
    if (edges.size() >= kMaxNfaStates) {
      throw Error(ErrorCode::kInvalidArgument, "pattern", "pattern is too large (NFA states)");
    }
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<uint32_t>(edges.size() - 1);
  }

  void byte(uint32_t from, uint32_t to, uint8_t lo, uint8_t hi) {
    edges[from].push_back({lo, hi, to});
  }
  // One hex digit whose value is in [lo, hi], in either letter case.
  void hex_digit(uint32_t from, uint32_t to, int lo, int hi) {
    for (int v = lo; v <= hi; ++v) {
      if (v < 10) {
        byte(from, to, static_cast<uint8_t>('0' + v), static_cast<uint8_t>('0' + v));
      } else {
        byte(from, to, static_cast<uint8_t>('a' + v - 10), static_cast<uint8_t>('a' + v - 10));
        byte(from, to, static_cast<uint8_t>('A' + v - 10), static_cast<uint8_t>('A' + v - 10));
      }
    }
  }
  // "\u" then four hex digits, each in its [lo, hi].
  void u_escape(uint32_t from, uint32_t to, const int (&lo)[4], const int (&hi)[4]) {
    uint32_t a = add(), b = add();
    byte(from, a, '\\', '\\');
    byte(a, b, 'u', 'u');
    for (int k = 0; k < 4; ++k) {
      const uint32_t next = k == 3 ? to : add();
      hex_digit(b, next, lo[k], hi[k]);
      b = next;
    }
  }

  // How the code points of `set` may be written inside a JSON string: raw
  // UTF-8, except '"', '\\' and controls, which need escapes; '/' may also
  // be written "\/". A set of every code point also reads any \uXXXX
  // escape, surrogates only as a high-low pair, so that an unconstrained
  // string accepts every RFC 8259 spelling of valid Unicode text.
  void json_set(uint32_t s, uint32_t e, const CodeSet& set) {
    auto contains = [&](uint32_t cp) {
      for (auto [lo, hi] : set)
        if (cp >= lo && cp <= hi) return true;
      return false;
    };
    std::vector<std::vector<ByteRange>> seqs;
    for (auto [lo, hi] : set) {
      // Raw spellings: everything but controls, '"' and '\\'.
      const uint32_t cuts[][2] = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodePoint}};
      for (auto [clo, chi] : cuts) {
        const uint32_t a = std::max(lo, clo), b = std::min(hi, chi);
        if (a <= b) utf8_sequences(a, b, seqs);
      }
    }
    for (const auto& seq : seqs) path(s, e, seq);
    auto two = [&](char c) {
      const uint32_t m = add();
      byte(s, m, '\\', '\\');
      byte(m, e, static_cast<uint8_t>(c), static_cast<uint8_t>(c));
    };
    if (contains('"')) two('"');
    if (contains('\\')) two('\\');
    if (contains('/')) two('/');
    const bool full =
        !canonical && set.size() == 1 && set[0].first == 0 && set[0].second == kMaxCodePoint;
    static constexpr char kShort[] = "btn\0fr";  // U+0008..U+000D; \0 = none (VT)
    for (uint32_t c = 0; c < 0x20; ++c) {
      if (!contains(c)) continue;
      if (c >= 8 && c <= 13 && kShort[c - 8] != '\0') two(kShort[c - 8]);
      if (!full) {
        const int v1 = static_cast<int>(c >> 4), v0 = static_cast<int>(c & 15);
        u_escape(s, e, {0, 0, v1, v0}, {0, 0, v1, v0});
      }
    }
    if (!full) return;
    // Any escape outside the surrogates: first digit 0-C or E-F, or D0-D7.
    u_escape(s, e, {0, 0, 0, 0}, {12, 15, 15, 15});
    u_escape(s, e, {14, 0, 0, 0}, {15, 15, 15, 15});
    u_escape(s, e, {13, 0, 0, 0}, {13, 7, 15, 15});
    const uint32_t mid = add();
    u_escape(s, mid, {13, 8, 0, 0}, {13, 11, 15, 15});
    u_escape(mid, e, {13, 12, 0, 0}, {13, 15, 15, 15});
  }

  // Builds n between fresh states; returns (start, end).
  std::pair<uint32_t, uint32_t> build(const Node& n) {
    const uint32_t s = add(), e = add();
    switch (n.kind) {
      case Node::kEmpty:
        eps[s].push_back(e);
        break;
      case Node::kSet: {
        if (json_string) {
          json_set(s, e, n.set);
          break;
        }
        std::vector<std::vector<ByteRange>> seqs;
        for (auto [lo, hi] : n.set) utf8_sequences(lo, hi, seqs);
        for (const auto& seq : seqs) path(s, e, seq);
        break;
      }
      case Node::kConcat: {
        uint32_t cur = s;
        for (const auto& k : n.kids) {
          auto [ks, ke] = build(*k);
          eps[cur].push_back(ks);
          cur = ke;
        }
        eps[cur].push_back(e);
        break;
      }
      case Node::kAlt:
        for (const auto& k : n.kids) {
          auto [ks, ke] = build(*k);
          eps[s].push_back(ks);
          eps[ke].push_back(e);
        }
        break;
      case Node::kRepeat: {
        uint32_t cur = s;
        for (int k = 0; k < n.min; ++k) {
          auto [ks, ke] = build(*n.kids[0]);
          eps[cur].push_back(ks);
          cur = ke;
        }
        if (n.max < 0) {
          auto [ks, ke] = build(*n.kids[0]);
          eps[cur].push_back(ks);
          eps[ke].push_back(ks);
          eps[ke].push_back(e);
        } else {
          for (int k = n.min; k < n.max; ++k) {
            auto [ks, ke] = build(*n.kids[0]);
            eps[cur].push_back(ks);
            eps[cur].push_back(e);
            cur = ke;
          }
        }
        eps[cur].push_back(e);
        break;
      }
    }
    return {s, e};
  }

  void closure(std::vector<uint32_t>& set, std::vector<uint8_t>& seen) const {
    for (size_t k = 0; k < set.size(); ++k) {
      for (uint32_t t : eps[set[k]]) {
        if (!seen[t]) {
          seen[t] = 1;
          set.push_back(t);
        }
      }
    }
    for (uint32_t t : set) seen[t] = 0;
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
  }
};

}  // namespace

namespace {

NodePtr any_string() {
  auto r = make(Node::kRepeat);
  r->min = 0;
  r->max = -1;
  auto s = make(Node::kSet);
  s->set = {{0, kMaxCodePoint}};
  r->kids.push_back(std::move(s));
  return r;
}

NodePtr literal_node(std::string_view text) {
  auto cat = make(Node::kConcat);
  for (size_t i = 0; i < text.size();) {
    const auto b0 = static_cast<uint8_t>(text[i]);
    const size_t n = b0 < 0x80 ? 1 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
    if (i + n > text.size()) {
      throw Error(ErrorCode::kInvalidArgument, "pattern", "literal is not valid UTF-8");
    }
    uint32_t cp = n == 1 ? b0 : (b0 & (0x7Fu >> n));
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(text[i + k]) & 0x3Fu);
    i += n;
    auto c = make(Node::kSet);
    c->set = {{cp, cp}};
    cat->kids.push_back(std::move(c));
  }
  return cat;
}

NodePtr alternative_root(const RegexAlternative& alt, const RegexOptions& opt) {
  if (alt.literal) return literal_node(alt.text);
  bool anchored_start = false, anchored_end = false;
  NodePtr root = Parser(alt.text, opt.unicode_classes || alt.unicode_classes)
                     .parse(anchored_start, anchored_end);
  if (opt.full_match) return root;
  // Search semantics: anything may come before and after an unanchored side.
  auto cat = make(Node::kConcat);
  if (!anchored_start) cat->kids.push_back(any_string());
  cat->kids.push_back(std::move(root));
  if (!anchored_end) cat->kids.push_back(any_string());
  return cat;
}

}  // namespace

Dfa Dfa::compile(std::string_view pattern, const RegexOptions& opt) {
  const RegexAlternative alt{pattern, false};
  return compile_labeled(std::span(&alt, 1), opt);
}

Dfa Dfa::compile_labeled(std::span<const RegexAlternative> alts, const RegexOptions& opt) {
  Nfa nfa;
  nfa.json_string = opt.json_string;
  nfa.canonical = opt.canonical_escapes;
  const uint32_t ns = nfa.add();
  std::vector<uint32_t> ends;
  for (const auto& alt : alts) {
    NodePtr root = alternative_root(alt, opt);
    auto [as, ae] = nfa.build(*root);
    if (opt.json_string) {  // the quotes around the content
      const uint32_t open = nfa.add(), close = nfa.add();
      nfa.byte(open, as, '"', '"');
      nfa.byte(ae, close, '"', '"');
      as = open;
      ae = close;
    }
    nfa.eps[ns].push_back(as);
    ends.push_back(ae);
  }
  std::vector<uint32_t> label_of(nfa.edges.size(), UINT32_MAX);
  for (size_t k = 0; k < ends.size(); ++k) label_of[ends[k]] = static_cast<uint32_t>(k);

  // Subset construction.
  Dfa d;
  std::map<std::vector<uint32_t>, int32_t> ids;
  std::vector<std::vector<uint32_t>> sets;
  std::vector<uint8_t> seen(nfa.edges.size(), 0);
  std::vector<uint32_t> first = {ns};
  seen[ns] = 1;
  nfa.closure(first, seen);
  ids[first] = 0;
  sets.push_back(first);
  std::vector<uint32_t> next;
  for (size_t cur = 0; cur < sets.size(); ++cur) {
    d.table_.resize((cur + 1) * 256, kDead);
    // Byte boundaries where the transition sets can change.
    std::vector<int> cuts = {0, 256};
    for (uint32_t s : sets[cur]) {
      for (const auto& e : nfa.edges[s]) {
        cuts.push_back(e.lo);
        cuts.push_back(e.hi + 1);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int b = cuts[c];
      next.clear();
      for (uint32_t s : sets[cur]) {
        for (const auto& e : nfa.edges[s]) {
          if (b >= e.lo && b <= e.hi && !seen[e.to]) {
            seen[e.to] = 1;
            next.push_back(e.to);
          }
        }
      }
      if (next.empty()) continue;
      nfa.closure(next, seen);
      auto [it, fresh] = ids.emplace(next, static_cast<int32_t>(sets.size()));
      if (fresh) {
        if (sets.size() >= opt.max_states) {
          const std::string what =
              alts.size() == 1 ? "pattern \"" + std::string(alts[0].text) + "\"" : "alternation";
          throw Error(ErrorCode::kInvalidArgument, "pattern",
                      what + " needs more than " + std::to_string(opt.max_states) + " DFA states");
        }
        sets.push_back(next);
      }
      for (int x = b; x < cuts[c + 1]; ++x)
        d.table_[cur * 256 + static_cast<size_t>(x)] = it->second;
    }
  }
  std::vector<std::vector<uint32_t>> labels(sets.size());
  for (size_t k = 0; k < sets.size(); ++k) {
    for (uint32_t st : sets[k]) {
      if (label_of[st] != UINT32_MAX) labels[k].push_back(label_of[st]);
    }
  }
  d.finish(labels);
  return d;
}

void Dfa::finish(const std::vector<std::vector<uint32_t>>& labels) {
  const size_t n = labels.size();
  accepting_.assign(n, 0);
  label_begin_.assign(n + 1, 0);
  labels_.clear();
  for (size_t k = 0; k < n; ++k) {
    labels_.insert(labels_.end(), labels[k].begin(), labels[k].end());
    label_begin_[k + 1] = static_cast<uint32_t>(labels_.size());
    accepting_[k] = labels[k].empty() ? 0 : 1;
  }
  // Remove states that cannot reach acceptance (reverse reachability).
  std::vector<std::vector<int32_t>> rev(n);
  for (size_t k = 0; k < n; ++k) {
    for (int b = 0; b < 256; ++b) {
      const int32_t t = table_[k * 256 + static_cast<size_t>(b)];
      if (t >= 0) rev[static_cast<size_t>(t)].push_back(static_cast<int32_t>(k));
    }
  }
  std::vector<uint8_t> live(n, 0);
  std::vector<int32_t> stack;
  for (size_t k = 0; k < n; ++k) {
    if (accepting_[k]) {
      live[k] = 1;
      stack.push_back(static_cast<int32_t>(k));
    }
  }
  while (!stack.empty()) {
    const int32_t t = stack.back();
    stack.pop_back();
    for (int32_t f : rev[static_cast<size_t>(t)]) {
      if (!live[static_cast<size_t>(f)]) {
        live[static_cast<size_t>(f)] = 1;
        stack.push_back(f);
      }
    }
  }
  for (auto& t : table_) {
    if (t >= 0 && !live[static_cast<size_t>(t)]) t = kDead;
  }
  start_ = n > 0 && live[0] ? 0 : kDead;
  final_.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    bool exits = false;
    for (int b = 0; b < 256 && !exits; ++b) exits = table_[k * 256 + static_cast<size_t>(b)] >= 0;
    final_[k] = accepting_[k] && !exits ? 1 : 0;
  }
}

Dfa Dfa::intersect(const Dfa& a, const Dfa& b, size_t max_states) {
  Dfa d;
  std::vector<std::vector<uint32_t>> labels;
  std::map<std::pair<int32_t, int32_t>, int32_t> ids;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  if (a.start_ >= 0 && b.start_ >= 0) {
    ids[{a.start_, b.start_}] = 0;
    pairs.push_back({a.start_, b.start_});
  }
  for (size_t cur = 0; cur < pairs.size(); ++cur) {
    d.table_.resize((cur + 1) * 256, kDead);
    const auto [x, y] = pairs[cur];
    for (int c = 0; c < 256; ++c) {
      const int32_t nx = a.next(x, static_cast<uint8_t>(c)),
                    ny = b.next(y, static_cast<uint8_t>(c));
      if (nx < 0 || ny < 0) continue;
      auto [it, fresh] = ids.emplace(std::pair{nx, ny}, static_cast<int32_t>(pairs.size()));
      if (fresh) {
        if (pairs.size() >= max_states) {
          throw Error(ErrorCode::kInvalidArgument, "pattern",
                      "intersection needs more than " + std::to_string(max_states) + " DFA states");
        }
        pairs.push_back({nx, ny});
      }
      d.table_[cur * 256 + static_cast<size_t>(c)] = it->second;
    }
    labels.emplace_back();
    if (a.accepting(x) && b.accepting(y)) labels.back().push_back(0);
  }
  d.finish(labels);
  return d;
}

uint64_t Dfa::fingerprint() const noexcept {
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(start_);
  auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (int32_t t : table_) mix(static_cast<uint32_t>(t));
  for (uint8_t a : accepting_) mix(a);
  for (uint32_t l : labels_) mix(l);
  for (uint32_t b : label_begin_) mix(b);
  return h;
}

bool Dfa::matches(std::string_view bytes) const noexcept {
  int32_t s = start_;
  for (unsigned char c : bytes) {
    s = next(s, c);
    if (s == kDead) return false;
  }
  return accepting(s);
}

}  // namespace nextok::constraint
