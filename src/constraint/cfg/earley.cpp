#include "constraint/cfg/earley.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

EarleyTables::EarleyTables(const Cfg& g) : terminals(g.terminals) {
  const size_t n = g.rules.size();
  // Nonterminal n is S' -> root, so acceptance is one item to look for.
  prod_begin.assign(n + 2, 0);
  std::vector<std::vector<uint32_t>> per(n + 1);
  auto add_prod = [&](uint32_t a, std::span<const Symbol> body) {
    per[a].push_back(static_cast<uint32_t>(syms.size()));
    for (Symbol s : body) {
      syms.push_back(s);
      lhs.push_back(a);
    }
    syms.push_back(kEnd);
    lhs.push_back(a);
  };
  for (uint32_t a = 0; a < n; ++a) {
    for (const auto& seq : g.rules[a]) add_prod(a, seq);
  }
  const Symbol root = static_cast<Symbol>(g.root);
  add_prod(static_cast<uint32_t>(n), std::span(&root, 1));
  start_pos = per[n][0];
  accept_pos = start_pos + 1;
  for (size_t a = 0; a <= n; ++a) {
    prod_begin[a + 1] = prod_begin[a] + static_cast<uint32_t>(per[a].size());
    prods.insert(prods.end(), per[a].begin(), per[a].end());
  }
  // Byte classes: bytes that every terminal holds alike.
  const ByteClasses bc = byte_classes(terminals);
  for (unsigned b = 0; b < 256; ++b) byte_class[b] = static_cast<uint8_t>(bc.of[b]);
  classes = static_cast<uint32_t>(bc.rep.size());
  class_bytes.assign(classes, {});
  for (unsigned b = 0; b < 256; ++b) class_bytes[byte_class[b]].add(static_cast<uint8_t>(b));
  class_ascii.assign(classes, 0);
  for (unsigned b = 0; b < 128; ++b) ++class_ascii[byte_class[b]];
  nullable.assign(n + 1, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t a = 0; a <= n; ++a) {
      if (nullable[a]) continue;
      for (uint32_t k = prod_begin[a]; k < prod_begin[a + 1] && !nullable[a]; ++k) {
        bool all = true;
        for (uint32_t p = prods[k]; syms[p] != kEnd && all; ++p) {
          all = syms[p] >= 0 && nullable[static_cast<size_t>(syms[p])];
        }
        if (all) {
          nullable[a] = 1;
          changed = true;
        }
      }
    }
  }
}

void set_key(std::vector<uint64_t>& items, bool accepting, std::string& key) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  key.assign(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(uint64_t));
  key.push_back(static_cast<char>(accepting));
}

Earley::Earley(const EarleyTables& t, size_t max_items) : t_(t), max_items_(max_items) {
  const size_t cap = std::bit_ceil(std::max<size_t>(64, max_items * 2));
  keys_.assign(cap, 0);
  gen_.assign(cap, 0);
}

void Earley::add(Chart& c, uint32_t pos, uint32_t origin) {
  const uint64_t key = (uint64_t{pos} << 32) | origin;
  const size_t mask = keys_.size() - 1;
  size_t h = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  while (gen_[h] == cur_gen_) {
    if (keys_[h] == key) return;
    h = (h + 1) & mask;
  }
  const size_t k = c.sets() - 1;
  if (c.items.size() - c.begin[k] >= max_items_) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "an Earley set grew past " + std::to_string(max_items_) + " items at byte " +
                    std::to_string(k) + " (ConstraintLimits::max_parse_items)");
  }
  gen_[h] = cur_gen_;
  keys_[h] = key;
  c.items.push_back({pos, origin});
}

// Prediction and completion until set k is closed. Predicting a nullable
// nonterminal also steps over it (Aycock and Horspool), so completions of
// empty derivations are never missed.
void Earley::close(Chart& c, size_t k) {
  bool accept = false;
  for (size_t i = c.begin[k]; i < c.items.size(); ++i) {
    const Item it = c.items[i];
    const Symbol s = t_.syms[it.pos];
    if (s == EarleyTables::kEnd) {
      const auto a = static_cast<Symbol>(t_.lhs[it.pos]);
      if (it.pos == t_.accept_pos && it.origin == 0) accept = true;
      const size_t lo = c.begin[it.origin];
      const size_t hi = it.origin == k ? c.items.size() : c.begin[it.origin + 1];
      for (size_t j = lo; j < hi; ++j) {
        const Item w = c.items[j];
        if (t_.syms[w.pos] == a) add(c, w.pos + 1, w.origin);
      }
    } else if (s >= 0) {
      const auto a = static_cast<size_t>(s);
      for (uint32_t p = t_.prod_begin[a]; p < t_.prod_begin[a + 1]; ++p) {
        add(c, t_.prods[p], static_cast<uint32_t>(k));
      }
      if (t_.nullable[a]) add(c, it.pos + 1, it.origin);
    }
  }
  c.accepting.push_back(accept);
}

void Earley::start(Chart& c) {
  c.items.clear();
  c.begin.assign(1, 0);
  c.accepting.clear();
  c.begin.push_back(0);
  ++cur_gen_;
  add(c, t_.start_pos, 0);
  c.begin.back() = static_cast<uint32_t>(c.items.size());
  // close() reads begin[k + 1] only for earlier sets; the open set runs to
  // the end of items.
  close(c, 0);
  c.begin.back() = static_cast<uint32_t>(c.items.size());
}

bool Earley::step(Chart& c, uint8_t b) {
  const size_t k = c.sets() - 1;
  const size_t lo = c.begin[k], hi = c.begin[k + 1];
  c.begin.push_back(static_cast<uint32_t>(hi));
  ++cur_gen_;
  try {
    for (size_t i = lo; i < hi; ++i) {
      const Item it = c.items[i];
      const Symbol s = t_.syms[it.pos];
      if (s < 0 && s != EarleyTables::kEnd && t_.terminals[terminal_id(s)].has(b)) {
        add(c, it.pos + 1, it.origin);
      }
    }
    if (c.items.size() == hi) {
      c.begin.pop_back();
      return false;
    }
    close(c, k + 1);
  } catch (...) {
    c.items.resize(hi);
    c.begin.resize(k + 2);
    c.accepting.resize(k + 1);
    throw;
  }
  c.begin.back() = static_cast<uint32_t>(c.items.size());
  return true;
}

ByteSet Earley::next_bytes(const Chart& c) const {
  ByteSet out;
  for (const Item& it : c.set(c.sets() - 1)) {
    const Symbol s = t_.syms[it.pos];
    if (s < 0 && s != EarleyTables::kEnd) {
      const ByteSet& t = t_.terminals[terminal_id(s)];
      for (size_t w = 0; w < 4; ++w) out.w[w] |= t.w[w];
    }
  }
  return out;
}

}  // namespace nextok::constraint::cfg
