// What the grammar front-ends (GBNF, Lark) share while they build the IR:
// named and fresh nonterminals, repetition, code-point classes, the size,
// time and cancel budget of ConstraintLimits, and errors that name a
// line and column of the grammar text.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "constraint/cfg/cfg.hpp"
#include "nextok/json_schema.hpp"

namespace nextok::constraint::cfg {

using CodeRanges = std::vector<std::pair<uint32_t, uint32_t>>;

// llama.cpp refuses repetition counts above this (MAX_REPETITION_THRESHOLD);
// the Lark front-end keeps the same bound.
constexpr unsigned long kMaxRepetition = 2000;

class CfgBuilder {
 public:
  CfgBuilder(std::string_view src, const ConstraintLimits& limits);

  // Error{kInvalidArgument, "grammar"}: "line:column: what" at byte `at`.
  [[noreturn]] void fail(size_t at, const std::string& what) const;
  std::string where(size_t at) const;  // "line:column"
  // Counts symbols against max_grammar_nodes; checks time and cancel now
  // and then.
  void grew(size_t symbols, size_t at);

  // The nonterminal called `name`, made on first use (remembered at `at`
  // for an "undefined" error).
  uint32_t named(std::string_view name, size_t at);
  void define(uint32_t id, std::vector<std::vector<Symbol>> alts);
  bool defined(uint32_t id) const { return defined_[id] != 0; }
  size_t first_use(uint32_t id) const { return first_use_[id]; }
  // A new helper nonterminal (defined by the caller).
  uint32_t fresh(const std::string& base, size_t at);

  // seq[from..] as one symbol.
  Symbol as_symbol(std::vector<Symbol>& seq, size_t from, const std::string& base, size_t at);
  // x{min,max} (max < 0: unbounded) in place of seq[from..]. Unbounded
  // tails are left-recursive (S ::= S x | empty), which keeps Earley sets
  // small however long the repetition runs; bounded tails nest
  // (O_k ::= x O_(k-1) | empty).
  void repeat(std::vector<Symbol>& seq, size_t from, long min, long max, size_t at,
              const std::string& base);
  // The code points of `set` (any order, may overlap), or all others: one
  // byte-set terminal when ASCII, else a shared nonterminal of UTF-8
  // sequences.
  Symbol code_class(CodeRanges set, bool negated, size_t at);
  // The bytes of `text`, one terminal each, appended to seq.
  void bytes(std::string_view text, std::vector<Symbol>& seq, size_t at);

  // Another grammar's rules, renamed into this one; returns its root.
  Symbol import(const Cfg& sub, size_t at);

  // Rules already written for a small automaton (automaton_rules.hpp's
  // accepted), by its content: equal leaves of different %json schemas
  // (a hundred tools' string and enum leaves) share one set of rules.
  std::unordered_map<std::string, std::optional<Symbol>>& automaton_rules() { return automata_; }

  // A helper rule shared by key (a literal's bytes, a whitespace run):
  // made by `make` on first use, the same symbol after.
  template <class Make>
  Symbol shared(const std::string& key, Make&& make) {
    if (const auto it = shared_.find(key); it != shared_.end()) return it->second;
    const Symbol s = make();
    shared_.emplace(key, s);
    return s;
  }

  Cfg& cfg() { return g_; }
  const ConstraintLimits& limits() const { return limits_; }
  Cfg take() { return std::move(g_); }

 private:
  std::string_view src_;
  const ConstraintLimits& limits_;
  std::chrono::steady_clock::time_point t0_;
  size_t size_ = 0;
  size_t ticks_ = 0;
  Cfg g_;
  std::map<std::string, uint32_t, std::less<>> ids_;
  std::vector<uint8_t> defined_;
  std::vector<size_t> first_use_;
  std::map<CodeRanges, uint32_t> classes_;
  std::unordered_map<std::string, std::optional<Symbol>> automata_;
  std::unordered_map<std::string, Symbol> shared_;
};

// UTF-8 of one code point, appended.
void append_utf8(uint32_t cp, std::string& out);

}  // namespace nextok::constraint::cfg
