// A generation as a state machine the caller steps (docs/decode-loop.md).
// It says which model call comes next, takes that call's logits rows,
// chooses tokens and emits them through the callback. generate() drives one
// with a Model; a batching server drives many, one model step for all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "nextok/generate.hpp"

namespace nextok {

class Generation {
 public:
  // The model call whose rows feed() wants next.
  struct Call {
    // Positions the model must keep before this call, counted from the
    // start of this generation's prompt (context before it, a previous
    // turn, is untouched): drop any past it (rejected drafts).
    std::size_t keep = 0;
    // Appended to the context (the prompt first, then the chosen token and
    // any draft). Valid until the next feed().
    std::span<const std::int32_t> tokens;
    // One logits row per token (draft verification), else only the last.
    bool all_logits = false;
  };

  // Validates the options (kInvalidArgument naming the parameter) against
  // the vocabulary and the model's logits width. The options are copied;
  // options.constraint and options.speculative.drafter stay the caller's
  // and must outlive the generation. The prompt must not be empty.
  Generation(const Vocabulary& vocab, std::size_t logits_width,
             std::span<const std::int32_t> prompt, const GenerateOptions& options,
             TokenCallback on_token = {});
  ~Generation();
  Generation(Generation&&) noexcept;
  Generation& operator=(Generation&&) noexcept;

  bool done() const noexcept;
  // The next call; only while !done().
  const Call& next_call() const;
  // Optional, after issuing next_call() and before feed(): work that can
  // run while the model does (the next constraint mask).
  void prepare();
  // The rows of next_call(): a [tokens, width] view with all_logits, else
  // one row. Chooses, emits, and sets the next call or finishes.
  void feed(const LogitsView& rows);
  // Ends the generation now as cancelled (a client that left).
  void cancel();

  // The output so far; whole once done(). Timing stats other than the
  // sampler's and the constraint's are the driver's to fill.
  const GenerateResult& result() const noexcept;
  GenerateResult take_result();

  struct Impl;
  Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nextok
