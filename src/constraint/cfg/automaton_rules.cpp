#include "constraint/cfg/automaton_rules.hpp"

#include <map>
#include <string>

#include "constraint/regex/dfa.hpp"

namespace nextok::constraint::cfg {

Automaton Automaton::of(const Dfa& d) {
  Automaton a{d.states(), d.start(), {d.table().begin(), d.table().end()}, {}};
  for (size_t q = 0; q < a.states; ++q) a.accepting.push_back(d.accepting(static_cast<int32_t>(q)));
  return a;
}

std::vector<uint32_t> reach(CfgBuilder& b, const Automaton& a, size_t at, const ByteSet* first) {
  std::vector<uint32_t> nt(a.states + 1);
  for (auto& x : nt) x = b.fresh("lexeme_state", at);
  std::vector<std::vector<std::vector<Symbol>>> alts(a.states + 1);
  alts[a.states].push_back({});
  for (size_t q = 0; q < a.states; ++q) {
    std::map<int32_t, ByteSet> to;
    for (unsigned c = 0; c < 256; ++c) {
      if (const int32_t t = a.at(q, c); t >= 0) to[t].add(static_cast<uint8_t>(c));
    }
    for (const auto& [t, set] : to) {
      alts[static_cast<size_t>(t)].push_back({static_cast<Symbol>(nt[q]), b.cfg().terminal(set)});
      if (static_cast<int32_t>(q) != a.start) continue;
      ByteSet s0 = set;
      if (first) {
        for (size_t w = 0; w < s0.w.size(); ++w) s0.w[w] &= first->w[w];
      }
      if (!s0.empty()) {
        alts[static_cast<size_t>(t)].push_back(
            {static_cast<Symbol>(nt[a.states]), b.cfg().terminal(s0)});
      }
    }
    b.grew(4 * to.size() + 1, at);
  }
  for (size_t q = 0; q <= a.states; ++q) b.define(nt[q], std::move(alts[q]));
  return nt;
}

namespace {

// The automaton's content as a key, for one small enough to keep: per
// state its accepting bit and its runs of bytes with one target.
std::optional<std::string> content_key(const Automaton& a, const ByteSet* first) {
  constexpr size_t kMaxKeptStates = 4096;
  if (a.states > kMaxKeptStates) return std::nullopt;
  std::string key;
  const auto put = [&](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(a.start);
  for (size_t q = 0; q < a.states; ++q) {
    key.push_back(static_cast<char>(a.accepting[q]));
    const size_t count_at = key.size();  // the state's run count (up to 256), filled in below
    key.append(2, '\0');
    unsigned runs = 0;
    for (unsigned c = 0; c < 256;) {
      const int32_t t = a.at(q, c);
      unsigned e = c + 1;
      while (e < 256 && a.at(q, e) == t) ++e;
      if (t >= 0) {
        key.push_back(static_cast<char>(c));
        key.push_back(static_cast<char>(e - 1));
        put(t);
        ++runs;
      }
      c = e;
    }
    key[count_at] = static_cast<char>(runs & 0xFF);
    key[count_at + 1] = static_cast<char>(runs >> 8);
  }
  if (first) put(first->w);
  return key;
}

}  // namespace

std::optional<Symbol> accepted(CfgBuilder& b, const Automaton& a, size_t at, const ByteSet* first) {
  const std::optional<std::string> key = content_key(a, first);
  if (key) {
    if (const auto it = b.automaton_rules().find(*key); it != b.automaton_rules().end())
      return it->second;
  }
  const std::optional<Symbol> out = accepted_once(b, a, at, first);
  if (key) b.automaton_rules().emplace(*key, out);
  return out;
}

std::optional<Symbol> accepted_once(CfgBuilder& b, const Automaton& a, size_t at,
                                    const ByteSet* first) {
  const std::vector<uint32_t> nt = reach(b, a, at, first);
  std::vector<std::vector<Symbol>> alts;
  for (size_t q = 0; q < a.states; ++q) {
    if (a.accepting[q]) alts.push_back({static_cast<Symbol>(nt[q])});
  }
  if (a.start >= 0 && a.accepting[static_cast<size_t>(a.start)]) {
    alts.push_back({static_cast<Symbol>(nt[a.states])});
  }
  if (alts.empty()) return std::nullopt;
  const uint32_t out = b.fresh("lexeme", at);
  b.define(out, std::move(alts));
  return static_cast<Symbol>(out);
}

}  // namespace nextok::constraint::cfg
