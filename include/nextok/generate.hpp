// The decode loop: one reusable generation loop that any engine drives
// through the small Model interface. EOS, stop strings and max tokens end it;
// the ThinkSplitter routes text to channels and enforces the thinking budget;
// constraints, logprobs and speculative verification plug in per request.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nextok/config.hpp"
#include "nextok/constraint.hpp"
#include "nextok/logits.hpp"
#include "nextok/logprobs.hpp"
#include "nextok/speculative.hpp"
#include "nextok/think.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

// An engine's forward pass, seen as asynchronous steps. enqueue() may return
// before the step has run; logits() waits for it. Calls come from one thread.
class Model {
 public:
  virtual ~Model() = default;
  // Width of a logits row (may exceed the vocabulary).
  virtual std::size_t logits_width() const = 0;
  // Positions in the context so far (the KV cache length once queued work ends).
  virtual std::size_t context_length() const = 0;
  // Starts a step over `tokens`, appended to the context. With all_logits
  // the step keeps one logits row per token (speculative verification),
  // otherwise only the last position's.
  virtual void enqueue(std::span<const std::int32_t> tokens, bool all_logits = false) = 0;
  // Waits for the last enqueued step; its rows stay valid until the next
  // enqueue or truncate.
  virtual LogitsView logits() = 0;
  // Drops positions from `length` on (rejected drafts, a discarded
  // successor). Waits for queued work first.
  virtual void truncate(std::size_t length) = 0;

  // Optional: the spec's greedy fast path. The model picks argmax(logits) on
  // its own device and feeds the pick to the next step without the host
  // reading it first.
  virtual bool can_pick_on_device() const noexcept { return false; }
  // Queues pick = argmax of the last step's last row (lowest id on ties).
  virtual void enqueue_pick();
  // Queues a step over the most recent pick.
  virtual void enqueue_step_on_pick();
  // Waits for the oldest pick not read yet and returns it.
  virtual std::int32_t read_pick();
};

enum class FinishReason : std::uint8_t {
  kStop,       // an EOS id or a stop string
  kLength,     // max_tokens
  kCancelled,  // the callback asked to stop
};
const char* finish_reason_name(FinishReason reason) noexcept;

// One generated token, delivered as soon as it is chosen.
struct TokenEvent {
  std::int32_t token = 0;
  Channel channel = Channel::kContent;  // where the token was routed
  // Text released by this token, per channel. It may hold text held back
  // from earlier tokens (partial UTF-8, a possible marker or stop string).
  std::string reasoning;
  std::string content;
  const TokenLogprobs* logprobs = nullptr;  // null unless requested; null for forced tokens
  bool forced = false;                      // injected by the loop (</think>)
  bool drafted = false;                     // accepted from a speculative draft
};
// Return false to cancel the generation.
using TokenCallback = std::function<bool(const TokenEvent&)>;

struct GenerateOptions {
  SamplerConfig sampler;
  PenaltyConfig penalties;
  std::uint32_t max_tokens = 256;  // >= 1
  std::vector<std::string> stop;   // matched on the content channel
  // Ids that end the output. Empty: the vocabulary's EOS ids.
  std::vector<std::uint32_t> eos_ids;
  ThinkOptions think;
  // Owned by the caller; advanced token by token. Null: unconstrained.
  ConstraintEngine* constraint = nullptr;
  SpeculativeOptions speculative;
  // Compute the next step's mask while the model runs (false: serially after
  // the step, as the spec does; kept for measurement).
  bool overlap_mask = true;
};

struct GenerateStats {
  std::size_t steps = 0;                 // model steps after the prefill
  std::size_t drafted = 0;               // draft tokens sent for verification
  std::size_t accepted = 0;              // of those, accepted
  std::size_t forced = 0;                // injected </think> tokens
  std::size_t discarded_successors = 0;  // pipelined picks thrown away
  double prefill_seconds = 0.0;
  double decode_seconds = 0.0;
  double sampler_seconds = 0.0;     // choosing tokens (sampler + acceptance)
  double constraint_seconds = 0.0;  // masks and advances
  double wait_seconds = 0.0;        // blocked on the model
};

struct GenerateResult {
  std::vector<std::int32_t> tokens;  // every generated token, EOS and forced included
  std::string content;
  std::string reasoning;
  FinishReason finish = FinishReason::kLength;
  std::string stop_string;  // the stop string that matched, if any
  // One entry per token when logprobs are on (nullopt for forced tokens).
  std::vector<std::optional<TokenLogprobs>> logprobs;
  GenerateStats stats;
};

// Runs prefill over `prompt` (not empty) and decodes until a finish reason.
// Afterwards the model's context is the prompt and every generated token but
// the last.
// Throws kInvalidArgument for bad options (naming the parameter), including
// temperature > 0 with speculation unless speculative.stochastic is set.
GenerateResult generate(Model& model, const Vocabulary& vocab, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options, const TokenCallback& on_token = {});

}  // namespace nextok
