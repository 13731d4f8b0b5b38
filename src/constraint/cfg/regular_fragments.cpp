#include "constraint/cfg/regular_fragments.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "constraint/regex/compile_budget.hpp"

namespace nextok::constraint::cfg {

namespace {

constexpr size_t kMaxDepth = 1000;  // deeper chains of rules are left to Earley
// The compile budget's count per subset state beyond its table row.
constexpr size_t kStateSetBytes = 128;

// Which nonterminals are regular by construction (see the header).
class Regularity {
 public:
  explicit Regularity(const Cfg& g) : g_(g), state_(g.rules.size(), kUnknown) {}

  bool regular(uint32_t n, size_t depth = 0) {
    if (state_[n] == kVisiting) return false;  // a cycle through n
    if (state_[n] != kUnknown) return state_[n] == kYes;
    if (depth > kMaxDepth) return false;
    state_[n] = kVisiting;
    bool ok = !g_.rules[n].empty();
    for (const auto& seq : g_.rules[n]) {
      for (size_t i = 0; ok && i < seq.size(); ++i) {
        const Symbol s = seq[i];
        if (is_terminal(s)) continue;
        const auto m = static_cast<uint32_t>(s);
        // S ::= S x: a repetition, regular when x is and does not reach S.
        ok = m == n ? (i == 0 && seq.size() > 1) : regular(m, depth + 1);
      }
      if (!ok) break;
    }
    state_[n] = ok ? kYes : kNo;
    return ok;
  }

 private:
  enum : uint8_t { kUnknown, kVisiting, kYes, kNo };
  const Cfg& g_;
  std::vector<uint8_t> state_;
};

// A Thompson NFA over bytes of a regular nonterminal, rules inlined.
class NfaBuilder {
 public:
  NfaBuilder(const Cfg& g, size_t max_states) : g_(g), max_states_(max_states) {}

  // Whether some input leaves two repetitions open at once (one run may
  // end and the next begin anywhere, or one nests in the other): what makes
  // Earley's sets grow with the input. Checked on the subsets.
  bool ambiguous_loops() const { return ambiguous_loops_; }

  // False when the automaton would pass max_states.
  bool build(uint32_t n) {
    start_ = fresh();
    end_ = fresh();
    return nonterminal(n, start_, end_);
  }

  // Steps determinize took (see FragmentBudget::work).
  size_t steps() const { return steps_; }

  // Subset construction over byte classes (bytes no terminal tells apart);
  // nullopt past max_dfa states or max_steps steps.
  std::optional<Dfa> determinize(size_t max_dfa, size_t max_steps) const {
    ChargedBytes charged;
    const auto spent = [&] { return steps_ > max_steps; };
    // Classes: bytes with the same membership in every edge's set.
    std::vector<ByteSet> sets;
    for (const auto& out : edges_) {
      for (const auto& [set, to] : out) sets.push_back(set);
    }
    steps_ += 2 * 256 * (sets.size() + 1);  // the signatures, then each edge's classes
    if (spent()) return std::nullopt;
    const ByteClasses bc = byte_classes(std::move(sets));
    const auto& class_of = bc.of;
    const size_t classes = bc.rep.size();
    // Each edge's classes: its set holds a class whole or not at all.
    std::vector<std::vector<std::vector<uint32_t>>> edge_classes(edges_.size());
    for (size_t s = 0; s < edges_.size(); ++s) {
      for (const auto& [set, to] : edges_[s]) {
        std::vector<uint32_t> cs;
        for (size_t c = 0; c < classes; ++c) {
          if (set.has(bc.rep[c])) cs.push_back(static_cast<uint32_t>(c));
        }
        edge_classes[s].push_back(std::move(cs));
      }
    }
    std::map<std::vector<uint32_t>, int32_t> ids;
    std::vector<std::vector<uint32_t>> states = {closure({start_})};
    ids.emplace(states[0], 0);
    std::vector<int32_t> table;
    std::vector<uint8_t> accepting;
    std::vector<std::vector<uint32_t>> next(classes);
    std::vector<int32_t> to_class(classes);
    // Which repetitions lead into which (sequenced or nested): two of those
    // open at once are where a run's end is ambiguous. Alternatives side by
    // side (INT | INT "." INT) are open together too, but began together.
    const size_t h = hubs_.size();
    std::vector<std::vector<uint8_t>> leads(h, std::vector<uint8_t>(h, 0));
    for (size_t a = 0; a < h; ++a) {
      std::vector<uint8_t> seen(edges_.size(), 0);
      std::vector<uint32_t> todo = {hubs_[a]};
      seen[hubs_[a]] = 1;
      while (!todo.empty()) {
        const uint32_t x = todo.back();
        todo.pop_back();
        steps_ += 1 + edges_[x].size() + eps_[x].size();
        auto visit = [&](uint32_t y) {
          if (!seen[y]) seen[y] = 1, todo.push_back(y);
        };
        for (const auto& [set, to] : edges_[x]) visit(to);
        for (uint32_t y : eps_[x]) visit(y);
      }
      for (size_t b = 0; b < h; ++b) leads[a][b] = b != a && seen[hubs_[b]];
      steps_ += h;
      if (spent()) return std::nullopt;
    }
    for (size_t cur = 0; cur < states.size(); ++cur) {
      const auto& set = states[cur];
      accepting.push_back(std::binary_search(set.begin(), set.end(), end_));
      std::vector<size_t> open;
      for (size_t a = 0; a < h && !ambiguous_loops_; ++a) {
        if (!std::binary_search(set.begin(), set.end(), hubs_[a])) continue;
        for (size_t b : open) ambiguous_loops_ = ambiguous_loops_ || leads[a][b] || leads[b][a];
        open.push_back(a);
      }
      steps_ += h + classes + 256;
      for (auto& n : next) n.clear();
      for (uint32_t s : states[cur]) {
        for (size_t k = 0; k < edges_[s].size(); ++k) {
          steps_ += 1 + edge_classes[s][k].size();
          for (uint32_t c : edge_classes[s][k]) next[c].push_back(edges_[s][k].second);
        }
      }
      for (size_t c = 0; c < classes; ++c) {
        to_class[c] = Dfa::kDead;
        if (next[c].empty()) continue;
        auto target = closure(std::move(next[c]));
        next[c] = {};
        steps_ += target.size();  // the subset's lookup
        auto [it, added] = ids.emplace(std::move(target), static_cast<int32_t>(states.size()));
        if (added) {
          if (states.size() >= max_dfa) return std::nullopt;
          states.push_back(it->first);
        }
        to_class[c] = it->second;
      }
      if (spent()) return std::nullopt;
      table.resize((cur + 1) * 256);
      charged.hold(table.capacity() * sizeof(int32_t) + states.size() * kStateSetBytes);
      for (unsigned b = 0; b < 256; ++b) table[cur * 256 + b] = to_class[class_of[b]];
    }
    return Dfa::from_table(std::move(table), accepting);
  }

 private:
  uint32_t fresh() {
    edges_.emplace_back();
    eps_.emplace_back();
    return static_cast<uint32_t>(edges_.size() - 1);
  }

  bool nonterminal(uint32_t n, uint32_t s, uint32_t e) {
    if (edges_.size() > max_states_) return false;
    const auto& alts = g_.rules[n];
    if (!loops(n)) {
      const auto in = entry(n, e);
      if (!in) return false;
      eps_[s].push_back(*in);
      return true;
    }
    // S ::= S x | y: y, then x any number of times.
    const uint32_t m = fresh();
    hubs_.push_back(m);
    eps_[m].push_back(e);
    for (const auto& seq : alts) {
      const bool loop = !seq.empty() && seq[0] == static_cast<Symbol>(n);
      if (!(loop ? sequence(seq, 1, m, m) : sequence(seq, 0, s, m))) return false;
    }
    return true;
  }

  bool loops(uint32_t n) const {
    return std::any_of(g_.rules[n].begin(), g_.rules[n].end(), [&](const auto& seq) {
      return !seq.empty() && seq[0] == static_cast<Symbol>(n);
    });
  }

  // The entry of a nonterminal without repetition of its own, from which
  // its automaton reads to e: built once per (n, e) and shared by every use
  // that ends in e (its only way out is e, so the language from the entry
  // is the same for each). A code-point class's shared suffixes
  // (code_point_class.cpp) stay shared, not one copy a path, and a byte
  // into such a nonterminal goes to its entry (no state of its own), so
  // the subsets name each suffix once.
  std::optional<uint32_t> entry(uint32_t n, uint32_t e) {
    const auto it = shared_.find({n, e});
    if (it != shared_.end()) return it->second;
    const uint32_t in = fresh();
    shared_.emplace(std::pair{n, e}, in);
    for (const auto& seq : g_.rules[n]) {
      if (!sequence(seq, 0, in, e)) return std::nullopt;
    }
    return in;
  }

  bool sequence(const std::vector<Symbol>& seq, size_t from, uint32_t s, uint32_t e) {
    if (from == seq.size()) {
      eps_[s].push_back(e);
      return true;
    }
    uint32_t cur = s;
    for (size_t i = from; i < seq.size(); ++i) {
      if (is_terminal(seq[i]) && i + 2 == seq.size() && !is_terminal(seq[i + 1]) &&
          !loops(static_cast<uint32_t>(seq[i + 1]))) {
        const auto in = entry(static_cast<uint32_t>(seq[i + 1]), e);
        if (!in) return false;
        edges_[cur].emplace_back(g_.terminals[terminal_id(seq[i])], *in);
        return true;
      }
      const uint32_t next = i + 1 == seq.size() ? e : fresh();
      if (is_terminal(seq[i])) {
        edges_[cur].emplace_back(g_.terminals[terminal_id(seq[i])], next);
      } else if (!nonterminal(static_cast<uint32_t>(seq[i]), cur, next)) {
        return false;
      }
      cur = next;
    }
    return true;
  }

  std::vector<uint32_t> closure(std::vector<uint32_t> set) const {
    if (seen_.size() != eps_.size()) seen_.assign(eps_.size(), 0);
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    std::vector<uint32_t> todo;
    for (uint32_t s : set) {
      if (seen_[s] != stamp_) seen_[s] = stamp_, todo.push_back(s);
    }
    set.clear();
    while (!todo.empty()) {
      const uint32_t s = todo.back();
      todo.pop_back();
      set.push_back(s);
      steps_ += 2 + eps_[s].size();  // the visit, its sort share and its edges
      for (uint32_t t : eps_[s]) {
        if (seen_[t] != stamp_) seen_[t] = stamp_, todo.push_back(t);
      }
    }
    std::sort(set.begin(), set.end());
    return set;
  }

  const Cfg& g_;
  const size_t max_states_;
  std::vector<std::vector<std::pair<ByteSet, uint32_t>>> edges_;
  std::vector<std::vector<uint32_t>> eps_;
  uint32_t start_ = 0, end_ = 0;
  std::vector<uint32_t> hubs_;                                // the state each repetition loops on
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> shared_;  // (nonterminal, end) -> entry
  mutable bool ambiguous_loops_ = false;
  mutable std::vector<uint32_t> seen_;  // closure's marks: seen_[s] == stamp_
  mutable uint32_t stamp_ = 0;
  mutable size_t steps_ = 0;
};

// `only_ambiguous`: nullopt unless two repetitions can be open at once (a
// part without is as cheap as written, and cheaper where it starts).
std::optional<Dfa> dfa_of(const Cfg& g, uint32_t n, FragmentBudget& budget,
                          bool only_ambiguous = false) {
  NfaBuilder nfa(g, 8 * budget.max_states);
  if (!nfa.build(n)) return std::nullopt;
  auto d = nfa.determinize(budget.max_states, budget.work);
  budget.work -= std::min(budget.work, nfa.steps());
  if (only_ambiguous && !nfa.ambiguous_loops()) return std::nullopt;
  return d;
}

// n's alternatives become those of the left-linear grammar of d: Q_start ::= ε,
// Q_q ::= Q_p B for the bytes B taking p to q, n ::= Q_f for accepting f.
void write_left_linear(Cfg& g, uint32_t n, const Dfa& d) {
  const size_t k = d.states();
  std::vector<uint32_t> q(k);
  for (size_t p = 0; p < k; ++p) q[p] = g.add_nonterminal(g.names[n] + "~" + std::to_string(p));
  g.rules[q[static_cast<size_t>(d.start())]].push_back({});
  for (size_t p = 0; p < k; ++p) {
    std::map<int32_t, ByteSet> out;
    for (unsigned b = 0; b < 256; ++b) {
      const int32_t t = d.next(static_cast<int32_t>(p), static_cast<uint8_t>(b));
      if (t != Dfa::kDead) out[t].add(static_cast<uint8_t>(b));
    }
    for (const auto& [t, bytes] : out) {
      g.rules[q[static_cast<size_t>(t)]].push_back({static_cast<Symbol>(q[p]), g.terminal(bytes)});
    }
  }
  g.rules[n].clear();
  for (size_t p = 0; p < k; ++p) {
    if (d.accepting(static_cast<int32_t>(p))) g.rules[n].push_back({static_cast<Symbol>(q[p])});
  }
}

}  // namespace

std::optional<Dfa> regular_grammar_dfa(const Cfg& g, FragmentBudget& budget) {
  Regularity r(g);
  if (!r.regular(g.root)) return std::nullopt;
  return dfa_of(g, g.root, budget);
}

namespace {

// Whether every repetition n reaches lies inside a settled nonterminal
// (Cfg::settled): then no two are open at once, and n is cheaper as written.
bool loops_only_in_settled(const Cfg& g, uint32_t n) {
  std::vector<uint8_t> seen(g.rules.size(), 0);
  std::vector<uint32_t> todo = {n};
  seen[n] = 1;
  while (!todo.empty()) {
    const uint32_t a = todo.back();
    todo.pop_back();
    if (g.is_settled(a)) continue;
    for (const auto& seq : g.rules[a]) {
      if (!seq.empty() && seq[0] == static_cast<Symbol>(a)) return false;  // S ::= S x
      for (Symbol s : seq) {
        if (!is_terminal(s) && !seen[static_cast<size_t>(s)]) {
          seen[static_cast<size_t>(s)] = 1;
          todo.push_back(static_cast<uint32_t>(s));
        }
      }
    }
  }
  return true;
}

}  // namespace

void determinize_regular_fragments(Cfg& g, FragmentBudget& budget) {
  Regularity r(g);
  const size_t n = g.rules.size();
  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> todo = {g.root}, fragments;
  seen[g.root] = 1;
  while (!todo.empty()) {
    const uint32_t a = todo.back();
    todo.pop_back();
    if (g.is_settled(a)) continue;  // its loops are delimited inside it
    if (a != g.root && r.regular(a)) {
      if (!loops_only_in_settled(g, a)) fragments.push_back(a);
      continue;
    }
    for (const auto& seq : g.rules[a]) {
      for (Symbol s : seq) {
        if (!is_terminal(s) && !seen[static_cast<size_t>(s)]) {
          seen[static_cast<size_t>(s)] = 1;
          todo.push_back(static_cast<uint32_t>(s));
        }
      }
    }
  }
  // Each fragment's DFA is taken from the rules as they were, before any is
  // rewritten (a fragment may also be used inside a larger one elsewhere).
  std::vector<std::pair<uint32_t, Dfa>> dfas;
  size_t symbols = 0;
  for (uint32_t a : fragments) {
    if (budget.work == 0) break;
    auto d = dfa_of(g, a, budget, true);
    if (!d) continue;
    symbols += 4 * d->states() + 1;  // Q_p ::= ε | Q_q b ..., at least
    if (symbols > budget.max_symbols) break;
    dfas.emplace_back(a, std::move(*d));
  }
  for (const auto& [a, d] : dfas) write_left_linear(g, a, d);
}

}  // namespace nextok::constraint::cfg
