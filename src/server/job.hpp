// One queued generation and the channel that carries its tokens from the
// engine's worker to the HTTP thread that answers the client.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api_error.hpp"
#include "nextok/generate.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/speculative.hpp"

namespace nextok::server {

// What one token released, copied out of the decode loop.
struct JobEvent {
  std::int32_t token = 0;
  Channel channel = Channel::kContent;
  bool forced = false;
  std::string reasoning;
  std::string content;
  std::optional<TokenLogprobs> logprobs;
};

class Job {
 public:
  // Filled by ServeEngine::prepare.
  std::vector<std::int32_t> prompt;
  GenerateOptions options;
  std::unique_ptr<ConstraintEngine> constraint;
  std::unique_ptr<Drafter> drafter;
  bool stream = false;

  // Set by the worker; read after done.
  GenerateResult result;
  std::vector<Channel> channels;  // per generated token (logprob routing)
  std::optional<ApiError> error;
  std::chrono::steady_clock::time_point queued_at{};

  // Worker side.
  void push(JobEvent event);
  void finish();
  // HTTP side.
  enum class Wait { kEvent, kDone, kTimeout };
  // Moves the next event into `out`; kDone once every event is taken and the
  // job has finished.
  Wait next(JobEvent& out, std::chrono::milliseconds timeout);
  void wait_done();
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<JobEvent> events_;
  bool done_ = false;
  std::atomic<bool> cancelled_{false};
};

}  // namespace nextok::server
