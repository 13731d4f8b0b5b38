#include "constraint/regex/dfa.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "constraint/regex/compile_budget.hpp"
#include "constraint/regex/lookahead.hpp"
#include "constraint/regex/regex_parser.hpp"
#include "constraint/regex/utf8_ranges.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

constexpr size_t kMaxNfaStates = 200000;
// What the compile budget counts per NFA state (its four edge lists and a
// typical edge or two) and per subset or product state beyond its table row
// (the set, once as the map's key and once in the list, and the map node).
constexpr size_t kNfaStateBytes = 4 * sizeof(std::vector<uint32_t>) + 16;
constexpr size_t kMapNodeBytes = 64;

using regex::CodeSet;
using regex::kMaxCodePoint;
using regex::make;
using regex::Node;
using regex::NodePtr;

// Thompson NFA over bytes.
struct Nfa {
  struct Edge {
    uint8_t lo, hi;
    uint32_t to;
  };
  std::vector<std::vector<Edge>> edges;
  std::vector<std::vector<uint32_t>> eps;
  // Zero-width edges of ^ and $: passable only where the content starts or
  // ends, which the closure's caller knows (see compile_labeled).
  std::vector<std::vector<uint32_t>> at_start, at_end;
  bool anchored = false;     // there is such an edge
  bool json_string = false;  // sets read JSON string content (see RegexOptions)
  bool canonical = false;    // no \\uXXXX spellings of printable characters
  ChargedBytes charged;      // against the compile budget

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
    if (edges.size() % 1024 == 0) charged.hold((edges.size() + 1024) * kNfaStateBytes);
    edges.emplace_back();
    eps.emplace_back();
    at_start.emplace_back();
    at_end.emplace_back();
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
      case Node::kInputStart:
        at_start[s].push_back(e);
        anchored = true;
        break;
      case Node::kInputEnd:
        at_end[s].push_back(e);
        anchored = true;
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

  // Which assertion edges a closure may pass (bits).
  static constexpr unsigned kStart = 1, kEnd = 2;

  // Adds what epsilon edges (and the assertion edges `where` allows) reach;
  // the states in `set` come marked in `seen`, which is left all clear.
  void closure(std::vector<uint32_t>& set, std::vector<uint8_t>& seen, unsigned where = 0) const {
    auto visit = [&](const std::vector<uint32_t>& to) {
      for (uint32_t t : to) {
        if (!seen[t]) {
          seen[t] = 1;
          set.push_back(t);
        }
      }
    };
    for (size_t k = 0; k < set.size(); ++k) {
      const uint32_t s = set[k];
      visit(eps[s]);
      if (where & kStart) visit(at_start[s]);
      if (where & kEnd) visit(at_end[s]);
    }
    for (uint32_t t : set) seen[t] = 0;  // each state went in once: no duplicates
  }
};

// A ^ that starts or a $ that ends a top-level alternative of `root` holds
// at the match's ends in full-match mode, so it goes; in search mode, when
// every alternative has it, it means no search on that side and goes too
// (returns true). So common anchored patterns need no assertion edges.
bool peel(Node& root, Node::Kind anchor, bool full_match) {
  auto at = [anchor](Node& cat) {
    return anchor == Node::kInputStart ? cat.kids.begin() : cat.kids.end() - 1;
  };
  auto has = [&](const NodePtr& cat) { return !cat->kids.empty() && (*at(*cat))->kind == anchor; };
  const bool all = std::all_of(root.kids.begin(), root.kids.end(), has);
  if (!all && !full_match) return false;
  for (auto& cat : root.kids) {
    if (has(cat)) cat->kids.erase(at(*cat));
  }
  return all;
}

// In search mode a side left open is `.*`, which absorbs any repetition
// past the fewest: `.*A X{m,n}.*` matches exactly where `.*A X{m}.*` does.
// Cutting X{m,n} (and X{m,}) to X{m} at that side keeps the language and
// spares the subset construction a set per run length it would track
// (`[a-z]{3,31}` unanchored: thousands of states otherwise).
void shorten_open_side(Node& n, bool at_end) {
  switch (n.kind) {
    case Node::kRepeat:
      n.max = n.min;
      return;
    case Node::kConcat:
      if (!n.kids.empty()) shorten_open_side(at_end ? *n.kids.back() : *n.kids.front(), at_end);
      return;
    case Node::kAlt:
      for (auto& k : n.kids) shorten_open_side(*k, at_end);
      return;
    default:  // a set, an assertion (that side is anchored) or empty
      return;
  }
}

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
  NodePtr root = regex::parse(
      alt.text, regex::Syntax{.unicode = opt.unicode_classes || alt.unicode_classes || opt.python,
                              .python = opt.python,
                              .ignore_case = opt.ignore_case,
                              .dot_all = opt.dot_all});
  const bool from_start = peel(*root, Node::kInputStart, opt.full_match);
  const bool to_end = peel(*root, Node::kInputEnd, opt.full_match);
  if (opt.full_match) return root;
  // Search semantics: anything may come before and after an unanchored side
  // (where the assertions left inside see the input's ends).
  if (!from_start) shorten_open_side(*root, false);
  if (!to_end) shorten_open_side(*root, true);
  auto cat = make(Node::kConcat);
  if (!from_start) cat->kids.push_back(any_string());
  cat->kids.push_back(std::move(root));
  if (!to_end) cat->kids.push_back(any_string());
  return cat;
}

}  // namespace

Dfa Dfa::compile(std::string_view pattern, const RegexOptions& opt) {
  // (Lark terminals, in Python syntax, keep lookaround a clear error.)
  if (auto split = opt.python ? std::nullopt : regex::split_leading_lookaheads(pattern)) {
    // ^(?=X)(?!Y)R: ^R, meet a prefix matching X, minus one matching Y.
    auto text = [](std::string_view head, std::string_view body, std::string_view tail) {
      std::string t;  // appended piecewise: GCC 12 misreads "^" + string as overlapping
      t.append(head).append(body).append(tail);
      return t;
    };
    Dfa d = compile(text("^", split->rest, ""), opt);
    RegexOptions prefix = opt;
    prefix.full_match = false;
    for (const auto& t : split->tests) {
      const Dfa x = compile(text("^(?:", t.body, ")"), prefix);
      d = t.negative ? subtract(d, x, opt.max_states) : intersect(d, x, opt.max_states);
    }
    return d;
  }
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
  // A closed set needs only the states that read a byte, end an
  // alternative or hold an assertion edge: the others' successors are in
  // it already. Smaller sets make the construction several times faster.
  std::vector<uint8_t> important(nfa.edges.size(), 0);
  for (size_t s = 0; s < nfa.edges.size(); ++s) {
    important[s] = !nfa.edges[s].empty() || label_of[s] != UINT32_MAX || !nfa.at_start[s].empty() ||
                   !nfa.at_end[s].empty();
  }
  auto prune = [&](std::vector<uint32_t>& set) {  // and sort: the set's key
    std::erase_if(set, [&](uint32_t s) { return !important[s]; });
    std::sort(set.begin(), set.end());
  };

  // Subset construction. ^ and $ hold where the content starts and ends: at
  // the input's ends, or just inside the quotes in json_string mode. So ^
  // edges are passed only in the state where the content starts (no other
  // state has its NFA set: that holds a state only the start or the opening
  // quote enters), and $ edges only toward the end: for acceptance, and in
  // json_string mode for the closing quote, the only '"' content states read
  // (the content spells '"' as an escape).
  const bool anchored = nfa.anchored;
  const bool closing = anchored && opt.json_string;
  Dfa d;
  std::map<std::vector<uint32_t>, int32_t> ids;
  std::vector<std::vector<uint32_t>> sets;
  std::vector<uint8_t> starts;  // per state: the content starts there
  std::vector<std::vector<uint32_t>> labels;
  std::vector<uint8_t> seen(nfa.edges.size(), 0);
  std::vector<uint32_t> first = {ns};
  seen[ns] = 1;
  nfa.closure(first, seen, opt.json_string ? 0u : Nfa::kStart);
  prune(first);
  // A state where the content starts passes ^ edges: its key says so, since
  // pruned sets of a start and of a later state may coincide.
  auto key = [](const std::vector<uint32_t>& set, bool start) {
    std::vector<uint32_t> k = set;
    if (start) k.push_back(UINT32_MAX);
    return k;
  };
  ids[key(first, !opt.json_string)] = 0;
  sets.push_back(first);
  starts.push_back(!opt.json_string);
  std::vector<uint32_t> next, end;
  ChargedBytes charged;
  size_t set_bytes = 0;
  for (size_t cur = 0; cur < sets.size(); ++cur) {
    d.table_.resize((cur + 1) * 256, kDead);
    charged.hold(d.table_.capacity() * sizeof(int32_t) + set_bytes);
    if (anchored) {  // what the content's end reaches from here
      end = sets[cur];
      for (uint32_t s : end) seen[s] = 1;
      nfa.closure(end, seen, Nfa::kEnd | (starts[cur] ? Nfa::kStart : 0u));
    }
    labels.emplace_back();
    for (uint32_t st : anchored ? end : sets[cur]) {
      if (label_of[st] != UINT32_MAX) labels.back().push_back(label_of[st]);
    }
    std::sort(labels.back().begin(), labels.back().end());
    // Byte boundaries where the transition sets can change.
    std::vector<int> cuts = {0, 256};
    if (closing) {  // push_back: GCC 13 misreads an initializer-list insert here
      cuts.push_back('"');
      cuts.push_back('"' + 1);
    }
    for (uint32_t s : sets[cur]) {
      for (const auto& e : nfa.edges[s]) {
        cuts.push_back(e.lo);
        cuts.push_back(e.hi + 1);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // In json_string mode the content starts after the opening quote, which
    // only the first state reads.
    const bool to_start = opt.json_string && cur == 0;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int b = cuts[c];
      const bool at_close = closing && b == '"';
      next.clear();
      for (uint32_t s : at_close ? end : sets[cur]) {
        for (const auto& e : nfa.edges[s]) {
          if (b >= e.lo && b <= e.hi && !seen[e.to]) {
            seen[e.to] = 1;
            next.push_back(e.to);
          }
        }
      }
      if (next.empty()) continue;
      nfa.closure(next, seen, to_start ? Nfa::kStart : 0u);
      prune(next);
      auto [it, fresh] = ids.emplace(key(next, to_start), static_cast<int32_t>(sets.size()));
      if (fresh) {
        if (sets.size() >= opt.max_states) {
          const std::string what =
              alts.size() == 1 ? "pattern \"" + std::string(alts[0].text) + "\"" : "alternation";
          throw Error(ErrorCode::kInvalidArgument, "pattern",
                      what + " needs more than " + std::to_string(opt.max_states) + " DFA states");
        }
        sets.push_back(next);
        starts.push_back(to_start);
        set_bytes += 2 * next.size() * sizeof(uint32_t) + kMapNodeBytes;
      }
      for (int x = b; x < cuts[c + 1]; ++x)
        d.table_[cur * 256 + static_cast<size_t>(x)] = it->second;
    }
  }
  d.finish(labels);
  return d;
}

DfaPredecessors Dfa::predecessors_of(std::span<const int32_t> table, size_t states) {
  DfaPredecessors p;
  p.begin.assign(states + 1, 0);
  std::vector<int32_t> last(states, -1);  // the latest source counted per target
  for (size_t k = 0; k < states; ++k) {
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = table[k * 256 + b];
      if (t < 0 || last[static_cast<size_t>(t)] == static_cast<int32_t>(k)) continue;
      last[static_cast<size_t>(t)] = static_cast<int32_t>(k);
      ++p.begin[static_cast<size_t>(t) + 1];
    }
  }
  for (size_t t = 0; t < states; ++t) p.begin[t + 1] += p.begin[t];
  p.from.resize(p.begin[states]);
  std::vector<uint32_t> fill(p.begin.begin(), p.begin.end() - 1);
  std::fill(last.begin(), last.end(), -1);
  for (size_t k = 0; k < states; ++k) {
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = table[k * 256 + b];
      if (t < 0 || last[static_cast<size_t>(t)] == static_cast<int32_t>(k)) continue;
      last[static_cast<size_t>(t)] = static_cast<int32_t>(k);
      p.from[fill[static_cast<size_t>(t)]++] = static_cast<int32_t>(k);
    }
  }
  return p;
}

Dfa Dfa::from_table(std::vector<int32_t> table, const std::vector<uint8_t>& accepting) {
  Dfa d;
  d.table_ = std::move(table);
  std::vector<std::vector<uint32_t>> labels(accepting.size());
  for (size_t k = 0; k < accepting.size(); ++k)
    if (accepting[k]) labels[k] = {0};
  d.finish(labels);
  return d;
}

void Dfa::finish(const std::vector<std::vector<uint32_t>>& labels) {
  const size_t n = labels.size();
  table_.shrink_to_fit();  // grown by doubling; a kept DFA holds only its rows
  accepting_.assign(n, 0);
  label_begin_.assign(n + 1, 0);
  labels_.clear();
  for (size_t k = 0; k < n; ++k) {
    labels_.insert(labels_.end(), labels[k].begin(), labels[k].end());
    label_begin_[k + 1] = static_cast<uint32_t>(labels_.size());
    accepting_[k] = labels[k].empty() ? 0 : 1;
  }
  // Remove states that cannot reach acceptance (reverse reachability).
  DfaPredecessors rev = predecessors_of(table_, n);
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
    for (int32_t f : rev.of(static_cast<size_t>(t))) {
      if (!live[static_cast<size_t>(f)]) {
        live[static_cast<size_t>(f)] = 1;
        stack.push_back(f);
      }
    }
  }
  for (auto& t : table_) {
    if (t >= 0 && !live[static_cast<size_t>(t)]) t = kDead;
  }
  // What reaches a live state is live, so only the dead states' lists
  // change: they lose every entry.
  size_t at = 0;
  for (size_t t = 0; t < n; ++t) {
    const uint32_t b = rev.begin[t], e = rev.begin[t + 1];
    rev.begin[t] = static_cast<uint32_t>(at);
    if (!live[t]) continue;
    for (uint32_t i = b; i < e; ++i) rev.from[at++] = rev.from[i];
  }
  if (n > 0) rev.begin[n] = static_cast<uint32_t>(at);
  rev.from.resize(at);
  preds_ = std::move(rev);
  start_ = n > 0 && live[0] ? 0 : kDead;
  final_.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    bool exits = false;
    for (int b = 0; b < 256 && !exits; ++b) exits = table_[k * 256 + static_cast<size_t>(b)] >= 0;
    final_[k] = accepting_[k] && !exits ? 1 : 0;
  }
}

// The product automaton of a and b; with `minus`, the strings a accepts and
// b does not (b's side may die while a's goes on).
Dfa Dfa::product(const Dfa& a, const Dfa& b, size_t max_states, bool minus, bool keep_labels) {
  Dfa d;
  std::vector<std::vector<uint32_t>> labels;
  std::map<std::pair<int32_t, int32_t>, int32_t> ids;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  if (a.start_ >= 0 && (b.start_ >= 0 || minus)) {
    ids[{a.start_, b.start_}] = 0;
    pairs.push_back({a.start_, b.start_});
  }
  ChargedBytes charged;
  for (size_t cur = 0; cur < pairs.size(); ++cur) {
    d.table_.resize((cur + 1) * 256, kDead);
    charged.hold(d.table_.capacity() * sizeof(int32_t) + pairs.size() * kMapNodeBytes);
    const auto [x, y] = pairs[cur];
    for (int c = 0; c < 256; ++c) {
      const int32_t nx = a.next(x, static_cast<uint8_t>(c)),
                    ny = b.next(y, static_cast<uint8_t>(c));
      if (nx < 0 || (ny < 0 && !minus)) continue;
      auto [it, fresh] = ids.emplace(std::pair{nx, ny}, static_cast<int32_t>(pairs.size()));
      if (fresh) {
        if (pairs.size() >= max_states) {
          throw Error(ErrorCode::kInvalidArgument, "pattern",
                      std::string(minus ? "difference" : "intersection") + " needs more than " +
                          std::to_string(max_states) + " DFA states");
        }
        pairs.push_back({nx, ny});
      }
      d.table_[cur * 256 + static_cast<size_t>(c)] = it->second;
    }
    labels.emplace_back();
    if (a.accepting(x) && b.accepting(y) != minus) {
      if (keep_labels) {
        const auto la = a.labels(x);
        labels.back().assign(la.begin(), la.end());
      } else {
        labels.back().push_back(0);
      }
    }
  }
  d.finish(labels);
  return d;
}

Dfa Dfa::intersect(const Dfa& a, const Dfa& b, size_t max_states) {
  return product(a, b, max_states, false);
}

Dfa Dfa::restrict(const Dfa& a, const Dfa& b, size_t max_states) {
  return product(a, b, max_states, false, true);
}

Dfa Dfa::subtract(const Dfa& a, const Dfa& b, size_t max_states) {
  return product(a, b, max_states, true);
}

Dfa Dfa::unite(std::span<const Dfa* const> parts, size_t max_states,
               const std::function<void()>& tick) {
  std::optional<Dfa> d = try_unite(parts, max_states, tick);
  if (!d) {
    throw Error(ErrorCode::kInvalidArgument, "pattern",
                "union needs more than " + std::to_string(max_states) + " DFA states");
  }
  return std::move(*d);
}

std::optional<Dfa> Dfa::try_unite(std::span<const Dfa* const> parts, size_t max_states,
                                  const std::function<void()>& tick) {
  using Set = std::vector<std::pair<uint32_t, int32_t>>;  // (part, state), sorted
  Dfa d;
  std::vector<std::vector<uint32_t>> labels;
  std::map<Set, int32_t> ids;
  std::vector<Set> sets(1);
  for (uint32_t i = 0; i < parts.size(); ++i)
    if (parts[i]->start_ >= 0) sets[0].push_back({i, parts[i]->start_});
  if (sets[0].empty()) return d;
  ids[sets[0]] = 0;
  std::vector<Set> next(256);
  ChargedBytes charged;
  size_t set_bytes = 0;
  for (size_t cur = 0; cur < sets.size(); ++cur) {
    if (tick) tick();  // a state costs 256 steps per member: thousands for wide unions
    d.table_.resize((cur + 1) * 256, kDead);
    charged.hold(d.table_.capacity() * sizeof(int32_t) + set_bytes);
    for (auto& n : next) n.clear();
    bool accepting = false;
    for (auto [i, q] : sets[cur]) {
      accepting |= parts[i]->accepting(q);
      for (int c = 0; c < 256; ++c) {
        const int32_t q2 = parts[i]->next(q, static_cast<uint8_t>(c));
        if (q2 >= 0) next[static_cast<size_t>(c)].push_back({i, q2});
      }
    }
    for (int c = 0; c < 256; ++c) {
      Set& n = next[static_cast<size_t>(c)];
      if (n.empty()) continue;
      auto [it, fresh] = ids.emplace(n, static_cast<int32_t>(sets.size()));
      if (fresh) {
        if (sets.size() >= max_states) return std::nullopt;
        sets.push_back(n);
        set_bytes += 2 * n.size() * sizeof(Set::value_type) + kMapNodeBytes;
      }
      d.table_[cur * 256 + static_cast<size_t>(c)] = it->second;
    }
    labels.emplace_back();
    if (accepting) labels.back().push_back(0);
  }
  d.finish(labels);
  return d;
}

size_t Dfa::memory_bytes() const noexcept {
  return table_.capacity() * sizeof(int32_t) + accepting_.capacity() + final_.capacity() +
         (labels_.capacity() + label_begin_.capacity() + preds_.begin.capacity()) *
             sizeof(uint32_t) +
         preds_.from.capacity() * sizeof(int32_t);
}

uint64_t Dfa::fingerprint() const noexcept {
  uint64_t h = 0xcbf29ce484222325ull ^ static_cast<uint64_t>(start_);
  auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  // The table in four independent lanes of two entries each (a row is 256
  // entries): one serial multiply per entry was most of a small schema's
  // interning time.
  uint64_t lane[4] = {1, 2, 3, 4};
  for (size_t i = 0; i + 8 <= table_.size(); i += 8) {
    for (size_t j = 0; j < 4; ++j) {
      const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(table_[i + 2 * j])) |
                         static_cast<uint64_t>(static_cast<uint32_t>(table_[i + 2 * j + 1])) << 32;
      lane[j] = (lane[j] ^ v) * 0x9E3779B97F4A7C15ull;
      lane[j] ^= lane[j] >> 29;
    }
  }
  for (uint64_t l : lane) mix(l);
  for (size_t i = table_.size() / 8 * 8; i < table_.size(); ++i)
    mix(static_cast<uint32_t>(table_[i]));
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
