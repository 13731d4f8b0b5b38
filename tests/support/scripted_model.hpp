// ScriptedModel: a deterministic stand-in for an LLM. Logits are a hash of
// the context (so any change of input changes every later row), plus an
// optional script that boosts one token per generated position. It can run
// its steps on a worker thread with a simulated step time, like an engine on
// an accelerator, and can pick greedy tokens "on device".
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "nextok/generate.hpp"

namespace nextok::testing {

struct ScriptedModelOptions {
  std::size_t width = 151936;
  std::uint64_t seed = 1;
  float noise = 8.0f;                // hash logits are uniform in [0, noise)
  std::vector<std::int32_t> script;  // generated position -> boosted token
  float boost = 16.0f;
  bool threaded = false;
  std::chrono::microseconds step_time{0};  // slept per step (an accelerator's forward)
  bool device_pick = false;
};

class ScriptedModel final : public Model {
 public:
  explicit ScriptedModel(ScriptedModelOptions options);
  ~ScriptedModel() override;

  std::size_t logits_width() const override { return opt_.width; }
  std::size_t context_length() const override { return queued_length_; }
  void enqueue(std::span<const std::int32_t> tokens, bool all_logits) override;
  LogitsView logits() override;
  void truncate(std::size_t length) override;

  bool can_pick_on_device() const noexcept override { return opt_.device_pick; }
  void enqueue_pick() override;
  void enqueue_step_on_pick() override;
  std::int32_t read_pick() override;

  // The logits row that follows `context`, whose first `prompt_length`
  // tokens are the prompt (for oracles).
  std::vector<float> row_after(std::span<const std::int32_t> context,
                               std::size_t prompt_length) const;
  // The context as the model holds it (waits for queued work).
  std::vector<std::int32_t> context();
  std::size_t steps_run() const noexcept { return steps_run_; }
  std::size_t picks_made() const noexcept { return picks_made_; }

 private:
  void submit(std::function<void()> task);
  void wait_idle();
  void worker();
  void fill_row(std::uint64_t hash, std::size_t generated, float* out) const;
  void step(std::span<const std::int32_t> tokens, bool all_logits);

  ScriptedModelOptions opt_;
  std::size_t queued_length_ = 0;
  std::size_t prompt_length_ = 0;
  // Worker-side state.
  std::vector<std::int32_t> context_;
  std::vector<std::uint64_t> hashes_;  // hashes_[i] covers context_[0..i)
  std::vector<float> rows_;
  std::int64_t n_rows_ = 0;
  std::int32_t last_pick_ = -1;
  std::size_t steps_run_ = 0, picks_made_ = 0;
  // Queue.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::deque<std::optional<std::int32_t>> picks_;
  std::size_t busy_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace nextok::testing
