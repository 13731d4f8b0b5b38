#include "constraint/cfg/cfg.hpp"

#include <algorithm>
#include <bit>

#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

Symbol Cfg::terminal(const ByteSet& s) {
  // A class of many code points spells thousands of byte sets: a scan of
  // the terminals per set was most of a Lark compile with Python's \w.
  if (terminal_ids.size() != terminals.size()) {
    terminal_ids.clear();
    for (size_t t = 0; t < terminals.size(); ++t)
      terminal_ids.emplace(terminals[t], static_cast<uint32_t>(t));
  }
  const auto [it, added] = terminal_ids.emplace(s, static_cast<uint32_t>(terminals.size()));
  if (added) terminals.push_back(s);
  return terminal_symbol(it->second);
}

ByteClasses byte_classes(std::vector<ByteSet> sets) {
  // Partition refinement: split every class by each distinct set in turn
  // (a byte signature per set in a map cost most of a Lark compile).
  const auto less = [](const ByteSet& a, const ByteSet& b) { return a.w < b.w; };
  std::sort(sets.begin(), sets.end(), less);
  sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  ByteSet all;
  all.w.fill(~uint64_t{0});
  std::vector<ByteSet> parts = {all};
  for (const ByteSet& s : sets) {
    for (size_t i = 0, n = parts.size(); i < n && parts.size() < 256; ++i) {
      ByteSet in, out;
      for (size_t k = 0; k < 4; ++k) {
        in.w[k] = parts[i].w[k] & s.w[k];
        out.w[k] = parts[i].w[k] & ~s.w[k];
      }
      if (in.empty() || out.empty()) continue;
      parts[i] = in;
      parts.push_back(out);
    }
  }
  std::array<uint32_t, 256> part_of{};
  for (size_t i = 0; i < parts.size(); ++i) {
    for (size_t k = 0; k < 4; ++k) {
      for (uint64_t w = parts[i].w[k]; w != 0; w &= w - 1)
        part_of[k * 64 + static_cast<size_t>(std::countr_zero(w))] = static_cast<uint32_t>(i);
    }
  }
  ByteClasses out;
  std::vector<uint32_t> id(parts.size(), UINT32_MAX);
  for (unsigned b = 0; b < 256; ++b) {
    uint32_t& c = id[part_of[b]];
    if (c == UINT32_MAX) {
      c = static_cast<uint32_t>(out.rep.size());
      out.rep.push_back(static_cast<uint8_t>(b));
    }
    out.of[b] = c;
  }
  return out;
}

size_t Cfg::size() const noexcept {
  size_t n = 0;
  for (const auto& alts : rules) {
    for (const auto& seq : alts) n += seq.size() + 1;
  }
  return n;
}

void prune(Cfg& g) {
  const size_t n = g.rules.size();
  // Productive: some alternative made of terminals with bytes and
  // productive nonterminals. A worklist, linear in the grammar's size: each
  // alternative counts its symbols not yet known productive, and a rule that
  // becomes productive lowers the counts of the alternatives that use it (a
  // fixpoint by rounds was quadratic: 30,000 chained rules took 3 s).
  std::vector<uint8_t> productive(n, 0);
  auto ok = [&](Symbol s) {
    return is_terminal(s) ? !g.terminals[terminal_id(s)].empty()
                          : productive[static_cast<size_t>(s)] != 0;
  };
  constexpr uint32_t kDead = 0xFFFFFFFFu;  // holds a terminal without bytes
  std::vector<std::vector<uint32_t>> missing(n);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> users(n);
  std::vector<uint32_t> ready;
  for (size_t a = 0; a < n; ++a) {
    missing[a].assign(g.rules[a].size(), 0);
    for (size_t k = 0; k < g.rules[a].size(); ++k) {
      uint32_t& m = missing[a][k];
      for (Symbol s : g.rules[a][k]) {
        if (is_terminal(s)) {
          if (g.terminals[terminal_id(s)].empty()) m = kDead;
        } else if (m != kDead) {
          ++m;
          users[static_cast<size_t>(s)].emplace_back(static_cast<uint32_t>(a),
                                                     static_cast<uint32_t>(k));
        }
      }
      if (m == 0 && !productive[a]) {
        productive[a] = 1;
        ready.push_back(static_cast<uint32_t>(a));
      }
    }
  }
  while (!ready.empty()) {
    const uint32_t x = ready.back();
    ready.pop_back();
    for (const auto& [a, k] : users[x]) {
      uint32_t& m = missing[a][k];
      if (m != kDead && --m == 0 && !productive[a]) {
        productive[a] = 1;
        ready.push_back(a);
      }
    }
  }
  if (!productive[g.root]) {
    throw Error(
        ErrorCode::kInvalidArgument, "grammar",
        "the grammar's language is empty: rule '" + g.names[g.root] + "' derives no string");
  }
  for (auto& alts : g.rules) {
    std::erase_if(alts, [&](const std::vector<Symbol>& seq) {
      return !std::all_of(seq.begin(), seq.end(), ok);
    });
  }
  // Unreachable rules cost nothing at run time; clear them so that the
  // matcher's tables only hold what a parse can use.
  std::vector<uint8_t> reached(n, 0);
  std::vector<uint32_t> todo = {g.root};
  reached[g.root] = 1;
  while (!todo.empty()) {
    const uint32_t a = todo.back();
    todo.pop_back();
    for (const auto& seq : g.rules[a]) {
      for (Symbol s : seq) {
        if (!is_terminal(s) && !reached[static_cast<size_t>(s)]) {
          reached[static_cast<size_t>(s)] = 1;
          todo.push_back(static_cast<uint32_t>(s));
        }
      }
    }
  }
  for (size_t a = 0; a < n; ++a) {
    if (!reached[a]) g.rules[a].clear();
  }
}

}  // namespace nextok::constraint::cfg
