// Generation's state: choosing (sampler, constraint masks, draft
// verification) and emission (decode, think routing, stop strings, the
// callback). The step machine in generation.cpp and the device-pick driver
// in decode_loop.cpp share it.
#pragma once
#include <chrono>
#include <optional>
#include <vector>

#include "decode/stop_strings.hpp"
#include "nextok/generation.hpp"
#include "nextok/sampler.hpp"
#include "nextok/stream_decoder.hpp"

namespace nextok {

struct Chosen {
  std::int32_t token = 0;
  std::optional<TokenLogprobs> logprobs;
  bool forced = false;
  bool drafted = false;
};

struct Generation::Impl {
  using Clock = std::chrono::steady_clock;

  Impl(const Vocabulary& vocab, std::size_t logits_width, std::span<const std::int32_t> prompt,
       const GenerateOptions& opt, TokenCallback on_token);

  // ---- choosing and emitting (both drivers) -------------------------------
  bool is_eos(std::int32_t token) const;
  bool at_last_token() const { return result.tokens.size() + 1 >= opt.max_tokens; }
  std::span<const std::uint32_t> current_mask();
  void prepare_mask() {
    if (opt.overlap_mask) current_mask();
  }
  void advance_constraint(std::int32_t token);
  // Draft tokens up to the first one the constraint refuses (state unchanged).
  std::size_t constraint_prefix(std::span<const std::int32_t> draft);
  Chosen choose(const LogitsView& row);
  // Verifies one draft token with the stochastic acceptance rule.
  Chosen choose_against_draft(const LogitsView& row, std::int32_t draft, const Distribution* q);
  Chosen forced_close();
  // Delivers one token. True when the output has finished.
  bool emit(const Chosen& c);

  // ---- the step machine (generation.cpp) ----------------------------------
  enum class Phase : std::uint8_t {
    kFirst,    // the prompt's row: choose the first token
    kNext,     // one row after the last token: choose the next
    kVerify,   // rows after the token and each draft token
    kDiscard,  // the step after a token that latched the thinking budget
    kDone,
  };
  void feed(const LogitsView& rows);
  // After choosing `c` (emitted here): the next call, or done.
  void after_choice(const Chosen& c);
  void call(std::span<const std::int32_t> tokens, bool all_logits, std::size_t keep);
  void finish_now(FinishReason reason);

  const Vocabulary& vocab;
  const GenerateOptions opt;
  TokenCallback on_token;
  std::size_t prompt_length;
  Sampler sampler;
  ThinkSplitter splitter;
  ThinkSplitter::Routed routed;
  decode::StopStrings stop;
  StreamDecoder decoder;
  ConstraintEngine* constraint;
  std::vector<std::uint32_t> eos;
  std::vector<std::uint32_t> mask;
  bool mask_valid = false;
  bool think_reported_open = false;
  std::vector<std::int32_t> context;  // prompt and every emitted token
  GenerateResult result;

  Phase phase = Phase::kFirst;
  Generation::Call next;
  std::vector<std::int32_t> batch;  // the tokens of `next` after the prompt
  std::size_t model_length = 0;     // the model's context once `next` has run
  std::size_t verify_base = 0;      // model length before a verification call
  Draft draft;
  std::size_t draft_used = 0;  // draft tokens in the verification call
};

}  // namespace nextok
