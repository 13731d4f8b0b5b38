// Structural tags: output that is free text (or nothing) around tagged
// segments whose inside is constrained, e.g. a tool call
//   <tool_call>{"name": "get_weather", "arguments": {...}}</tool_call>
// The begin tag, the JSON value and the end tag are read as one byte
// language, so a token may span a tag and the value (`}}\n</`); masks are
// exact like JsonConstraint's. docs/tool-calls.md says how the server uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nextok/constraint.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

struct StructuralTagFormat {
  std::string begin;  // non-empty; in free text, its first occurrence opens a segment
  std::string end;    // may be empty: the segment ends with its JSON value
  std::shared_ptr<const JsonGrammar> content;
  // Free text may come before the first segment (tool_choice "auto"); when
  // false only whitespace may ("required").
  bool text_before = true;
  uint32_t min_segments = 0;
  uint32_t max_segments = 1;  // kUnlimited: any number
  // Whitespace allowed before the first segment (text_before false),
  // between segments and after the last one.
  uint8_t max_gap_whitespace = 20;

  static constexpr uint32_t kUnlimited = 0xffffffffu;
};

class StructuralTagGrammar {
 public:
  // Throws kInvalidArgument for an empty begin tag, a missing content
  // grammar, a grammar of another index, or min > max segments.
  static std::shared_ptr<const StructuralTagGrammar> build(std::shared_ptr<const TokenIndex> index,
                                                           StructuralTagFormat format);
  ~StructuralTagGrammar();

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  StructuralTagGrammar() = default;
  std::unique_ptr<Impl> impl_;
};

class StructuralTagConstraint final : public ConstraintEngine {
 public:
  explicit StructuralTagConstraint(std::shared_ptr<const StructuralTagGrammar> grammar);
  ~StructuralTagConstraint() override;
  StructuralTagConstraint(const StructuralTagConstraint& other);
  StructuralTagConstraint& operator=(const StructuralTagConstraint&) = delete;

  bool wants_mask() const noexcept override { return !think_open_; }
  void set_think_open(bool open) noexcept override { think_open_ = open; }
  void step_mask(std::span<uint32_t> mask) override;
  void advance(uint32_t token) override;
  bool is_complete() const noexcept override;
  bool can_continue() const override;
  bool finished() const noexcept override { return finished_; }
  void rollback(size_t n) override;
  void reset() override;
  std::unique_ptr<ConstraintEngine> clone() const override;

  // Whether these bytes could be read next (tests and tools).
  bool accepts_bytes(std::string_view bytes) const;
  // Segments completed so far.
  uint32_t segments() const noexcept;
  size_t steps() const noexcept;

 private:
  struct State;
  std::shared_ptr<const StructuralTagGrammar> grammar_;
  std::unique_ptr<State> state_;
  bool finished_ = false;
  bool think_open_ = false;
};

}  // namespace nextok
