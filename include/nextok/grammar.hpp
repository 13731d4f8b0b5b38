// Constrained output beyond JSON Schema: a GBNF grammar (llama.cpp's
// format), a Lark grammar, a regular expression (ECMA-262, full match) or a choice among
// strings. Same lifetimes as the JSON objects (nextok/json_schema.hpp):
//   Grammar            per grammar text: compiled once, immutable, shared
//                      by requests and threads.
//   GrammarConstraint  per request: the matcher state, cheap to clone.
// Masks are exact: a token is allowed iff the output can still be completed
// to a sentence of the grammar, EOS iff it is one. docs/constraint-engine.md
// ("Grammars") says what each front-end accepts.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "nextok/constraint.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

class Grammar {
 public:
  enum class Kind { kGbnf, kRegex, kChoice, kLark, kStructuralTag };

  // Token references as llama.cpp reads them: <[id]> and <text> (a special
  // token as itself, a text token as its text), and runs of !<special>.
  // Throws Error{kInvalidArgument, "grammar"} with "line:column: ..." on
  // syntax errors, undefined rules, a missing `root`, an empty language, a
  // token the vocabulary lacks, !<...> alone or of a text token, or a
  // grammar past `limits`.
  static std::shared_ptr<const Grammar> gbnf(std::shared_ptr<const TokenIndex> index,
                                             std::string_view text,
                                             const ConstraintLimits& limits = {});
  // A Lark grammar from its rule `start`: the language lark's Earley
  // parser accepts with the dynamic_complete lexer (regex terminals in
  // Python syntax, %import common, %ignore). Throws Error{kInvalidArgument,
  // "grammar"} with "line:column: ..." on syntax errors, undefined or
  // recursive terminals, a missing `start`, an empty language, a grammar
  // past `limits` and what is not supported (templates, %declare,
  // %override, %extend, other modules than common); Error{..., "pattern"}
  // on a regex terminal a DFA cannot express.
  static std::shared_ptr<const Grammar> lark(std::shared_ptr<const TokenIndex> index,
                                             std::string_view text,
                                             const ConstraintLimits& limits = {});
  // The whole output matches `pattern` (ECMA-262 without flags, lookaround
  // or backreferences). Throws Error{kInvalidArgument, "pattern"} on syntax
  // errors or a DFA past limits.max_dfa_states, Error{kUnsupported,
  // "pattern"} on what a DFA cannot express.
  static std::shared_ptr<const Grammar> regex(std::shared_ptr<const TokenIndex> index,
                                              std::string_view pattern,
                                              const ConstraintLimits& limits = {});
  // XGrammar's structural tag (the JSON of vLLM's and SGLang's
  // `structural_tag`): {"type": "structural_tag", "format": {...}} or the
  // older {"structures": [...], "triggers": [...]}. Formats: const_string,
  // json_schema, any_text, sequence, or, optional, plus, star, repeat, tag,
  // triggered_tags, tags_with_separator. Throws Error{kInvalidArgument,
  // "structural_tag"} for malformed input, Error{kUnsupported,
  // "structural_tag"} for the others (token formats, regex and grammar
  // content, XML styles, budgets), each naming the format's path.
  static std::shared_ptr<const Grammar> structural_tag(std::shared_ptr<const TokenIndex> index,
                                                       std::string_view json_text,
                                                       const ConstraintLimits& limits = {});
  // The output is exactly one of `strings` (Error{kInvalidArgument,
  // "choice"} when there are none).
  static std::shared_ptr<const Grammar> choice(std::shared_ptr<const TokenIndex> index,
                                               std::span<const std::string> strings,
                                               const ConstraintLimits& limits = {});
  ~Grammar();
  Kind kind() const noexcept;
  const TokenIndex& index() const noexcept;
  // The most memory the compile held at once, as ConstraintLimits::
  // max_compile_bytes counts it. Every constructor also fails past that
  // limit, max_compile_ms or a set cancel flag.
  size_t compile_bytes() const noexcept;

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  Grammar() = default;
  static std::shared_ptr<const Grammar> make(std::unique_ptr<Impl> impl, size_t compile_bytes);
  std::unique_ptr<Impl> impl_;
};

class GrammarConstraint final : public ConstraintEngine {
 public:
  explicit GrammarConstraint(std::shared_ptr<const Grammar> grammar);
  ~GrammarConstraint() override;
  GrammarConstraint(const GrammarConstraint& other);
  GrammarConstraint& operator=(const GrammarConstraint&) = delete;

  bool wants_mask() const noexcept override { return !think_open_; }
  void set_think_open(bool open) noexcept override { think_open_ = open; }
  // Throws Error{kInvalidArgument, "grammar"} when one byte's parse state
  // outgrows ConstraintLimits::max_parse_items.
  void step_mask(std::span<uint32_t> mask) override;
  void advance(uint32_t token) override;
  bool is_complete() const noexcept override;
  bool can_continue() const override;
  bool finished() const noexcept override { return finished_; }
  void rollback(size_t n) override;
  void reset() override;
  std::unique_ptr<ConstraintEngine> clone() const override;

  // Whether these bytes could be read next / read next complete a sentence.
  bool accepts_bytes(std::string_view bytes) const;
  bool completes_with(std::string_view bytes) const;
  size_t steps() const noexcept;

 private:
  // Special tokens (a Lark grammar's <|...|>): set where readable now, and
  // the text tokens holding 0xFF cleared; whether `token` is one read now.
  void allow_specials(std::span<uint32_t> mask) const;
  bool reads_special(uint32_t token) const;
  struct State;
  std::shared_ptr<const Grammar> grammar_;
  std::unique_ptr<State> state_;
  bool finished_ = false;
  bool think_open_ = false;
};

}  // namespace nextok
