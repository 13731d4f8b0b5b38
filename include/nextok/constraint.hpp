// The per-step interface a decode loop drives to constrain output (spec:
// ConstraintEngine). A loop without a constraint holds a null pointer:
// nothing is allocated and a step costs one null check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace nextok {

class ConstraintEngine {
 public:
  virtual ~ConstraintEngine() = default;

  // False while the engine does not constrain (an open think block): the
  // loop skips step_mask and samples unconstrained.
  virtual bool wants_mask() const noexcept = 0;
  // The decode loop reports whether a think block is open. Engines that leave
  // reasoning unconstrained stop masking (and ignore tokens) while it is.
  virtual void set_think_open(bool open) noexcept { (void)open; }
  // Fills the token bitmask (uint32 words, bit set = allowed; the
  // XGrammar/llguidance layout). `mask` needs at least bitmask_words(vocab
  // size) words; words past the vocabulary (padded logits) are cleared.
  // EOS ids are allowed exactly when the output is complete.
  virtual void step_mask(std::span<uint32_t> mask) = 0;
  // Moves on by one token; throws Error{kInvalidArgument, "token"} for a
  // token the mask does not allow, leaving the state unchanged.
  virtual void advance(uint32_t token) = 0;
  // The output is a complete value (EOS is allowed now).
  virtual bool is_complete() const noexcept = 0;
  // Some non-EOS token may still follow.
  virtual bool can_continue() const = 0;
  // EOS has been accepted.
  virtual bool finished() const noexcept = 0;
  // Undoes the last n advance() calls (speculative decoding).
  virtual void rollback(size_t n) = 0;
  virtual void reset() = 0;
  virtual std::unique_ptr<ConstraintEngine> clone() const = 0;
};

}  // namespace nextok
