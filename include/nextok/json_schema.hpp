// JSON and JSON-Schema constrained output (response_format json_object /
// json_schema). Three objects with three lifetimes:
//   TokenIndex    per vocabulary: the token trie and the mask caches every
//                 grammar shares; immutable, build once, share everywhere.
//   JsonGrammar   per schema: compiled once, shared by requests and threads.
//   JsonConstraint per request: the matcher state, small and cheap to clone.
// docs/constraint-engine.md says what is enforced and how.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/constraint.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

// Bounds on what a schema may cost; past one, compiling fails with a clear
// kInvalidArgument error instead of using unbounded time or memory.
struct ConstraintLimits {
  size_t max_schema_bytes = 4u << 20;  // schema text
  size_t max_grammar_nodes = 50000;
  size_t max_dfa_states = 200000;  // all pattern/format/enum DFAs together
  size_t max_enum_values = 100000;
  size_t max_schema_depth =
      128;  // nested subschemas (real schemas stay under ~30); grammars: parentheses
  uint32_t max_compile_ms = 2000;  // wall clock for JsonGrammar::from_schema; 0 = none
  // Set (from any thread) to stop a compile in progress: it fails at its next
  // budget check with kInvalidArgument, param "cancelled". Null: never.
  const std::atomic<bool>* cancel = nullptr;
  // Items in one Earley set of a grammar (nextok/grammar.hpp): a bound on
  // the work of one byte, so that a pathological grammar fails clearly
  // instead of stalling a decode step.
  size_t max_parse_items = 20000;
  // Memory a grammar (GBNF, Lark, regex, choice) may keep for masks it has
  // computed, shared by every matcher of the grammar (a state met again
  // costs a copy, not a walk of the vocabulary): about 750 Llama-3.1 masks
  // by default, least recently used out first. Paid per grammar in use: an
  // engine that caches many grammars may want less. 0 turns the memo off.
  size_t grammar_mask_memo_bytes = 16u << 20;
  // Memory one compile may hold at once (automata under construction and
  // kept, the parsed schema, grammar nodes), as the compiler counts it; past
  // it, Error{kInvalidArgument, "max_compile_bytes"}. 0 = none. Real schemas
  // need a few MiB; the states limit alone would allow ~200 MiB of tables.
  size_t max_compile_bytes = 256u << 20;
};

struct JsonConstraintOptions {
  // Strict: a keyword that constrains but is not enforced is a compile
  // error (kUnsupported naming the JSON pointer). Lenient: it is ignored and
  // listed in JsonGrammar::warnings().
  bool strict = true;
  // Longest whitespace run between JSON tokens; 0 = compact output.
  uint8_t max_whitespace = 20;
  ConstraintLimits limits;
};

class TokenIndex {
 public:
  static std::shared_ptr<const TokenIndex> build(std::shared_ptr<const Vocabulary> vocab);
  ~TokenIndex();
  const Vocabulary& vocab() const noexcept;

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  TokenIndex() = default;
  std::unique_ptr<Impl> impl_;
};

class JsonGrammar {
 public:
  // Throws Error{kInvalidArgument, "<JSON pointer>"} for malformed JSON or
  // schemas, Error{kUnsupported, "<JSON pointer>"} (strict mode) for
  // keywords that cannot be enforced.
  static std::shared_ptr<const JsonGrammar> from_schema(std::shared_ptr<const TokenIndex> index,
                                                        std::string_view schema_json,
                                                        const JsonConstraintOptions& opt = {});
  // Any JSON object (response_format json_object).
  static std::shared_ptr<const JsonGrammar> any_object(std::shared_ptr<const TokenIndex> index,
                                                       const JsonConstraintOptions& opt = {});
  ~JsonGrammar();
  const std::vector<std::string>& warnings() const noexcept;
  // The most memory the compile held at once, as ConstraintLimits::
  // max_compile_bytes counts it.
  size_t compile_bytes() const noexcept;

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  JsonGrammar() = default;
  static std::shared_ptr<const JsonGrammar> make(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class JsonConstraint final : public ConstraintEngine {
 public:
  explicit JsonConstraint(std::shared_ptr<const JsonGrammar> grammar);
  ~JsonConstraint() override;
  JsonConstraint(const JsonConstraint& other);
  JsonConstraint& operator=(const JsonConstraint&) = delete;

  bool wants_mask() const noexcept override { return !think_open_; }
  void step_mask(std::span<uint32_t> mask) override;
  void advance(uint32_t token) override;
  bool is_complete() const noexcept override;
  bool can_continue() const override;
  bool finished() const noexcept override { return finished_; }
  void rollback(size_t n) override;
  void reset() override;
  std::unique_ptr<ConstraintEngine> clone() const override;

  // While a think block is open the output is not constrained (wants_mask
  // is false and advance() ignores tokens).
  void set_think_open(bool open) noexcept override { think_open_ = open; }
  // Whether these bytes could be read next (tests and tools).
  bool accepts_bytes(std::string_view bytes) const;
  // Whether these bytes, read next, complete the value.
  bool completes_with(std::string_view bytes) const;
  size_t steps() const noexcept;

 private:
  struct State;
  std::shared_ptr<const JsonGrammar> grammar_;
  std::unique_ptr<State> state_;
  bool finished_ = false;
  bool think_open_ = false;
};

}  // namespace nextok
