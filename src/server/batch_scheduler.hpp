// Continuous batching over a LlamaModel. Each generation drives its own
// SlotModel (a nextok::Model over one sequence of the model) from its own
// thread, through the unchanged decode loop; the scheduler's thread gathers
// the steps the slots queue and runs them together: prompt and verification
// steps one by one, and the single-token steps of every slot as one batch
// (one pass over the weights). A sequence's logits do not depend on the batch
// it ran in, so output equals running each request alone.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "nextok/llama.hpp"

namespace nextok::server {

struct BatchStats {
  std::uint64_t batches = 0;         // single-token batches run
  std::uint64_t batched_tokens = 0;  // tokens in them
  std::uint64_t largest = 0;         // most tokens in one batch
  std::uint64_t other_steps = 0;     // prompt and verification steps
};

class BatchScheduler {
 public:
  // `slots` sequences are created up front (the model is not touched from
  // other threads afterwards). `gather` bounds how long a step waits for the
  // other active slots to queue theirs.
  BatchScheduler(LlamaModel& model, std::size_t slots,
                 std::chrono::microseconds gather = std::chrono::microseconds(2000));
  ~BatchScheduler();
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  std::size_t slots() const noexcept { return seqs_.size(); }
  // The model over slot `i`'s sequence, emptied; the slot counts as active
  // (others wait for its steps) until the returned object is destroyed.
  // One owner per slot at a time.
  std::unique_ptr<Model> open(std::size_t slot);
  BatchStats stats() const;

  class Slot;

 private:
  void submit(Slot& slot);
  void wait(Slot& slot);
  void close(Slot& slot);
  void loop();
  void run(std::vector<Slot*>& steps);

  LlamaModel& model_;
  std::vector<std::size_t> seqs_;
  std::chrono::microseconds gather_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<Slot*> queue_;
  std::size_t active_ = 0;
  bool stop_ = false;
  BatchStats stats_;
  std::thread thread_;
};

}  // namespace nextok::server
