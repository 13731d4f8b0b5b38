#include "constraint/cfg/cfg_builder.hpp"

#include <algorithm>

#include "constraint/cfg/gbnf.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

CfgBuilder::CfgBuilder(std::string_view src, const ConstraintLimits& limits)
    : src_(src), limits_(limits), t0_(std::chrono::steady_clock::now()) {}

void CfgBuilder::fail(size_t at, const std::string& what) const {
  throw Error(ErrorCode::kInvalidArgument, "grammar", where(at) + ": " + what);
}

std::string CfgBuilder::where(size_t at) const {
  size_t line = 1, col = 1;
  for (size_t k = 0; k < at && k < src_.size(); ++k) {
    if (src_[k] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

void CfgBuilder::grew(size_t symbols, size_t at) {
  size_ += symbols;
  if (size_ > limits_.max_grammar_nodes) {
    fail(at, "the grammar exceeds " + std::to_string(limits_.max_grammar_nodes) +
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
      fail(at, "compiling the grammar took over " + std::to_string(limits_.max_compile_ms) +
                   " ms (ConstraintLimits::max_compile_ms)");
    }
  }
}

uint32_t CfgBuilder::named(std::string_view name, size_t at) {
  auto [it, fresh] = ids_.emplace(std::string(name), static_cast<uint32_t>(g_.names.size()));
  if (fresh) {
    g_.add_nonterminal(std::string(name));
    defined_.push_back(0);
    first_use_.push_back(at);
  }
  return it->second;
}

void CfgBuilder::define(uint32_t id, std::vector<std::vector<Symbol>> alts) {
  g_.rules[id] = std::move(alts);
  defined_[id] = 1;
}

uint32_t CfgBuilder::fresh(const std::string& base, size_t at) {
  const uint32_t id = g_.add_nonterminal(base + "_" + std::to_string(g_.names.size()));
  defined_.push_back(1);
  first_use_.push_back(at);
  return id;
}

Symbol CfgBuilder::as_symbol(std::vector<Symbol>& seq, size_t from, const std::string& base,
                             size_t at) {
  if (seq.size() - from == 1) return seq[from];
  const uint32_t nt = fresh(base, at);
  g_.rules[nt] = {std::vector<Symbol>(seq.begin() + static_cast<ptrdiff_t>(from), seq.end())};
  grew(seq.size() - from + 1, at);
  return static_cast<Symbol>(nt);
}

void CfgBuilder::repeat(std::vector<Symbol>& seq, size_t from, long min, long max, size_t at,
                        const std::string& base) {
  if (from == seq.size()) fail(at, "expecting an item before a repetition operator");
  if (static_cast<unsigned long>(min) > kMaxRepetition ||
      (max > 0 && static_cast<unsigned long>(max) > kMaxRepetition)) {
    fail(at, "a repetition count above " + std::to_string(kMaxRepetition));
  }
  const Symbol x = as_symbol(seq, from, base, at);
  seq.resize(from);
  if (max < 0 && min > 0) {
    // x{min,}: x min - 1 times, then P ::= P x | x (not x P* with
    // P* ::= P* x | ε: one copy of x, so a regular fragment's automaton
    // holds x once rather than twice).
    for (long k = 1; k < min; ++k) seq.push_back(x);
    const uint32_t plus = fresh(base, at);
    g_.rules[plus] = {{static_cast<Symbol>(plus), x}, {x}};
    grew(static_cast<size_t>(min) + 4, at);
    seq.push_back(static_cast<Symbol>(plus));
    return;
  }
  for (long k = 0; k < min; ++k) seq.push_back(x);
  grew(static_cast<size_t>(min), at);
  if (max < 0) {
    const uint32_t star = fresh(base, at);
    g_.rules[star] = {{static_cast<Symbol>(star), x}, {}};
    grew(4, at);
    seq.push_back(static_cast<Symbol>(star));
  } else if (max > min) {
    Symbol tail = 0;
    for (long k = 0; k < max - min; ++k) {
      const uint32_t opt = fresh(base, at);
      g_.rules[opt] = k == 0 ? std::vector<std::vector<Symbol>>{{x}, {}}
                             : std::vector<std::vector<Symbol>>{{x, tail}, {}};
      grew(4, at);
      tail = static_cast<Symbol>(opt);
    }
    seq.push_back(tail);
  }
}

Symbol CfgBuilder::code_class(CodeRanges set, bool negated, size_t at) {
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
  const size_t before = g_.rules.size();
  const uint32_t nt =
      add_code_point_class(g_, merged, "char_class_" + std::to_string(classes_.size()));
  size_t symbols = 0;
  for (size_t k = before; k < g_.rules.size(); ++k) {
    defined_.push_back(1);
    first_use_.push_back(at);
    for (const auto& alt : g_.rules[k]) symbols += alt.size() + 1;
  }
  grew(symbols, at);
  classes_.emplace(std::move(merged), nt);
  return static_cast<Symbol>(nt);
}

void CfgBuilder::bytes(std::string_view text, std::vector<Symbol>& seq, size_t at) {
  for (char b : text) seq.push_back(g_.byte(static_cast<uint8_t>(b)));
  grew(text.size(), at);
}

Symbol CfgBuilder::import(const Cfg& sub, size_t at) {
  std::vector<uint32_t> ids(sub.names.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = fresh(sub.names[i], at);
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<std::vector<Symbol>> alts = sub.rules[i];
    size_t symbols = 0;
    for (auto& alt : alts) {
      for (Symbol& s : alt) {
        s = is_terminal(s) ? g_.terminal(sub.terminals[terminal_id(s)])
                           : static_cast<Symbol>(ids[static_cast<size_t>(s)]);
      }
      symbols += alt.size() + 1;
    }
    grew(symbols, at);
    define(ids[i], std::move(alts));
  }
  std::vector<uint32_t>& special = g_.special_tokens;
  special.insert(special.end(), sub.special_tokens.begin(), sub.special_tokens.end());
  std::sort(special.begin(), special.end());
  special.erase(std::unique(special.begin(), special.end()), special.end());
  return static_cast<Symbol>(ids[sub.root]);
}

}  // namespace nextok::constraint::cfg
