// Output that is either free text or one bare JSON value, told apart by its
// first non-whitespace byte: `{` opens the value, which must then match a
// JsonGrammar to the end; anything else is text. This is how Llama 3.1
// writes a tool call under tool_choice "auto" (the call is the whole turn,
// {"name": …, "parameters": …}, with no tag around it); docs/tool-calls.md.
// An optional marker token (Llama's <|python_tag|>) may come once before the
// decision without making the output text. Masks are exact, as
// JsonConstraint's: the text side's masks are precomputed per vocabulary,
// the value side is the JSON grammar's walker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/constraint.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

class JsonOrTextGrammar {
 public:
  // `marker` is a special token's text (e.g. "<|python_tag|>") that may come
  // once before the decision; empty, or absent from the vocabulary: none.
  // Throws kInvalidArgument for a missing grammar or one of another index.
  static std::shared_ptr<const JsonOrTextGrammar> build(std::shared_ptr<const TokenIndex> index,
                                                        std::shared_ptr<const JsonGrammar> value,
                                                        std::string_view marker = {});

  const Vocabulary& vocab() const noexcept { return index_->vocab(); }
  const std::shared_ptr<const JsonGrammar>& value() const noexcept { return value_; }
  std::optional<uint32_t> marker() const noexcept { return marker_; }
  // Tokens that decide for text (first non-whitespace byte not `{`), tokens
  // of JSON whitespace only, every token with bytes; EOS in none of them.
  std::span<const uint32_t> text_start() const noexcept { return text_start_; }
  std::span<const uint32_t> blank() const noexcept { return blank_; }
  std::span<const uint32_t> any() const noexcept { return any_; }

 private:
  JsonOrTextGrammar() = default;
  std::shared_ptr<const TokenIndex> index_;
  std::shared_ptr<const JsonGrammar> value_;
  std::optional<uint32_t> marker_;
  std::vector<uint32_t> text_start_, blank_, any_;  // bitmasks
};

class JsonOrTextConstraint final : public ConstraintEngine {
 public:
  enum class Mode : uint8_t { kUndecided, kValue, kText };

  explicit JsonOrTextConstraint(std::shared_ptr<const JsonOrTextGrammar> grammar);
  ~JsonOrTextConstraint() override;
  JsonOrTextConstraint(const JsonOrTextConstraint& other);
  JsonOrTextConstraint& operator=(const JsonOrTextConstraint&) = delete;

  bool wants_mask() const noexcept override { return !think_open_; }
  void set_think_open(bool open) noexcept override { think_open_ = open; }
  void step_mask(std::span<uint32_t> mask) override;
  void advance(uint32_t token) override;
  bool is_complete() const noexcept override;
  bool can_continue() const override;
  bool finished() const noexcept override { return steps_.back().finished; }
  void rollback(size_t n) override;
  void reset() override;
  std::unique_ptr<ConstraintEngine> clone() const override;

  Mode mode() const noexcept { return steps_.back().mode; }
  size_t steps() const noexcept { return steps_.size() - 1; }

 private:
  struct Step {
    Mode mode = Mode::kUndecided;
    bool value_alive = true;  // undecided: the JSON value may still begin
    bool marker_seen = false;
    bool finished = false;
    size_t value_steps = 0;  // tokens the JSON constraint has read
  };
  std::shared_ptr<const JsonOrTextGrammar> grammar_;
  JsonConstraint value_;
  std::vector<Step> steps_;
  std::vector<uint32_t> scratch_;
  bool think_open_ = false;
};

}  // namespace nextok
