// gpt-oss "harmony" output: the messages an assistant turn is made of, the
// constraint that makes a turn end in a valid function call, and the parser
// that reads a turn back into reasoning, answer and calls. docs/tool-calls.md
// ("gpt-oss harmony") describes the language; the prompt side is
// ChatFormat::kHarmony (nextok/chat.hpp).
//
// A turn continues the generation prompt `<|start|>assistant` with messages
//   <|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>…
// and ends with a final answer (`<|channel|>final<|message|>…<|return|>`) or
// a call (`<|channel|>commentary to=functions.NAME <|constrain|>json
// <|message|>{…}<|call|>`, or the recipient in the role header as the
// template renders past calls). The special tokens are atomic: text that
// spells `<|end|>` is text, as for the model.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nextok/constraint.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

// The ids of the harmony control tokens in a vocabulary.
struct HarmonyTokens {
  uint32_t start, end, message, channel, constrain, call, return_;

  // Throws Error{kUnsupported, "vocabulary"} naming the first missing token
  // (a vocabulary without harmony's special tokens cannot carry the format).
  static HarmonyTokens find(const Vocabulary& vocab);
};

struct HarmonyTool {
  std::string name;  // as in `to=functions.NAME`
  std::shared_ptr<const JsonGrammar> arguments;
};

struct HarmonyCallFormat {
  // The functions a call may name. None with allow_final: tool_choice
  // "none", a turn that may not call (analysis, preambles, a final answer).
  std::vector<HarmonyTool> tools;
  // tool_choice "auto": the turn may end with a final answer instead of a
  // call. False for "required" and a named choice (give that one tool).
  bool allow_final = true;
};

class HarmonyCallGrammar {
 public:
  // Throws Error{kInvalidArgument} for no tools and no final answer, an
  // empty or repeated name, a name with bytes outside [A-Za-z0-9_.-], or a
  // grammar of another vocabulary; kUnsupported when the vocabulary lacks
  // harmony's tokens.
  static std::shared_ptr<const HarmonyCallGrammar> build(std::shared_ptr<const TokenIndex> index,
                                                         HarmonyCallFormat format);
  ~HarmonyCallGrammar();

  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }

 private:
  HarmonyCallGrammar() = default;
  std::unique_ptr<Impl> impl_;
};

// Masks are exact over the token sequence: headers are one of the allowed
// spellings, message text is free (no control tokens but its terminator),
// a call's text is its function's JSON Schema. `<|call|>` and `<|return|>`
// end the turn; a vocabulary EOS is allowed after them, and EOS ids other
// than `<|call|>` also end a final answer.
class HarmonyCallConstraint final : public ConstraintEngine {
 public:
  explicit HarmonyCallConstraint(std::shared_ptr<const HarmonyCallGrammar> grammar);
  ~HarmonyCallConstraint() override;
  HarmonyCallConstraint(const HarmonyCallConstraint& other);
  HarmonyCallConstraint& operator=(const HarmonyCallConstraint&) = delete;

  // Harmony reasoning is a message of the turn, not a think block: the
  // engine always masks, and leaves the analysis text free itself.
  bool wants_mask() const noexcept override { return true; }
  void step_mask(std::span<uint32_t> mask) override;
  void advance(uint32_t token) override;
  bool is_complete() const noexcept override;
  bool can_continue() const override;
  bool finished() const noexcept override { return finished_; }
  void rollback(size_t n) override;
  void reset() override;
  std::unique_ptr<ConstraintEngine> clone() const override;

  // The turn has read its `<|call|>` or `<|return|>`.
  bool turn_ended() const noexcept;
  size_t steps() const noexcept;

 private:
  struct State;
  std::shared_ptr<const HarmonyCallGrammar> grammar_;
  std::unique_ptr<State> state_;
  bool finished_ = false;
};

struct HarmonyMessage {
  std::string role;  // "assistant" unless a header after <|start|> names another
  std::string channel;
  std::string recipient;     // "functions.get_weather", or empty
  std::string content_type;  // what follows channel and recipient: "<|constrain|>json", "json"
  std::string content;
  // Ended by <|end|>, <|call|> or <|return|> (not cut by the token limit).
  bool complete = false;
};

struct HarmonyCall {
  std::string name;       // the recipient without "functions."
  std::string arguments;  // the message text, verbatim
};

struct HarmonyTurn {
  std::vector<HarmonyMessage> messages;
  std::optional<std::string> reasoning;  // the analysis messages, joined by "\n"
  std::optional<std::string> content;    // the final answer
  std::vector<HarmonyCall> calls;        // complete messages to functions.*
};

// Reads the tokens generated after `<|start|>assistant` (the first header
// may begin directly with `<|channel|>` or ` to=`). Never throws on odd
// output: an unterminated message is kept with complete = false, tokens
// outside any message are dropped. Throws kUnsupported when the vocabulary
// lacks harmony's tokens.
HarmonyTurn parse_harmony_turn(const Vocabulary& vocab, std::span<const uint32_t> ids);

}  // namespace nextok
