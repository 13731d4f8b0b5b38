// generate(): a driver over Generation (docs/decode-loop.md). The step
// machine covers host sampling and speculation; the device-pick driver is
// the spec's greedy fast path, where the model picks and feeds its own
// argmax and the host only emits.
#include <chrono>

#include "decode/generation_impl.hpp"
#include "nextok/error.hpp"

namespace nextok {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool device_pick_mode(const Model& model, const GenerateOptions& opt) {
  return model.can_pick_on_device() && !opt.sampler.sampling_active() &&
         !opt.penalties.penalties_active() && opt.sampler.top_logprobs_k == 0 &&
         opt.constraint == nullptr && opt.speculative.drafter == nullptr;
}

LogitsView wait(Model& model, GenerateStats& stats) {
  const auto t0 = Clock::now();
  LogitsView rows = model.logits();
  stats.wait_seconds += seconds_since(t0);
  return rows;
}

// Per token: queue the step over pick t and the pick of t+1, then read pick
// t, so the successor is already queued when token t is emitted.
void run_device_pick(Model& model, Generation::Impl& g) {
  GenerateStats& stats = g.result.stats;
  model.enqueue_pick();
  std::optional<Chosen> host_pending;
  for (;;) {
    Chosen c;
    if (host_pending) {
      c = std::move(*host_pending);
      host_pending.reset();
    } else {
      if (!g.at_last_token()) {
        model.enqueue_step_on_pick();
        model.enqueue_pick();
        ++stats.steps;
      }
      const auto t0 = Clock::now();
      c.token = model.read_pick();
      stats.wait_seconds += seconds_since(t0);
    }
    if (g.emit(c)) return;
    if (g.splitter.take_force_close()) {
      model.read_pick();  // the pipelined successor
      ++stats.discarded_successors;
      host_pending = g.forced_close();
      if (!g.at_last_token()) {
        model.enqueue(std::span(&host_pending->token, 1));
        model.enqueue_pick();
        ++stats.steps;
      }
    }
  }
}

// Drives the step machine: each call is queued, the next mask is built
// while the model runs, and the rows go back to the machine. `base` is the
// model's context before the prompt (a previous turn), which stays.
void run_steps(Model& model, Generation& g, std::size_t base, Clock::time_point t0) {
  GenerateStats& stats = g.impl().result.stats;
  bool first = true;
  Clock::time_point t1 = t0;
  while (!g.done()) {
    const Generation::Call& call = g.next_call();
    if (model.context_length() > base + call.keep) model.truncate(base + call.keep);
    model.enqueue(call.tokens, call.all_logits);
    g.prepare();
    const LogitsView rows = wait(model, stats);
    if (first) {
      stats.prefill_seconds = seconds_since(t0);
      t1 = Clock::now();
      first = false;
    }
    g.feed(rows);
  }
  stats.decode_seconds = seconds_since(t1);
}

}  // namespace

const char* finish_reason_name(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "?";
}

namespace {
[[noreturn]] void no_device_pick() {
  throw Error(ErrorCode::kUnsupported, "model", "this model cannot pick tokens on its device");
}
}  // namespace

void Model::enqueue_pick() {
  no_device_pick();
}
void Model::enqueue_step_on_pick() {
  no_device_pick();
}
std::int32_t Model::read_pick() {
  no_device_pick();
}

GenerateResult generate(Model& model, const Vocabulary& vocab, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options, const TokenCallback& on_token) {
  Generation g(vocab, model.logits_width(), prompt, options, on_token);
  const std::size_t base = model.context_length();
  const auto t0 = Clock::now();
  if (device_pick_mode(model, options)) {
    GenerateStats& stats = g.impl().result.stats;
    model.enqueue(prompt);
    stats.prefill_seconds = seconds_since(t0);  // queued, not waited for
    const auto t1 = Clock::now();
    run_device_pick(model, g.impl());
    stats.decode_seconds = seconds_since(t1);
  } else {
    run_steps(model, g, base, t0);
  }
  GenerateResult r = g.take_result();
  // The context ends with every token but the last, whatever the drive
  // (queued work past it is dropped): a next turn feeds the last token.
  const std::size_t keep = base + prompt.size() + r.tokens.size() - 1;
  if (model.context_length() > keep) model.truncate(keep);
  return r;
}

}  // namespace nextok
