#include "constraint/cfg/automaton_rules.hpp"

#include <map>

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

std::optional<Symbol> accepted(CfgBuilder& b, const Automaton& a, size_t at, const ByteSet* first) {
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
