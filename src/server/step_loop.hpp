// The server's scheduler: one thread steps every live generation together
// (docs/server.md). Per iteration it admits queued jobs into free slots
// (first come, first served, long prompts on at most slots - 1 of them),
// ends cancelled ones, queues each
// generation's next call, runs the single-token calls as one batched model
// step (prompts and verifications on their own), computes the next masks
// on a worker pool meanwhile, samples every row on the pool, and retires
// the finished. No thread per request and no gather window. Long prompts
// share one chunk of prompt tokens per iteration (chunked prefill, in
// turns), so the others keep streaming while they are read; they yield
// their chunk while a new short request takes its first two calls (its
// prompt and first token), at most two iterations in a row.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "job.hpp"
#include "nextok/generation.hpp"
#include "nextok/llama.hpp"
#include "worker_pool.hpp"

namespace nextok::server {

struct BatchStats {
  std::uint64_t batches = 0;         // single-token batches run
  std::uint64_t batched_tokens = 0;  // tokens in them
  std::uint64_t largest = 0;         // most tokens in one batch
  std::uint64_t other_steps = 0;     // prompt and verification steps
  std::uint64_t prefill_chunks = 0;  // partial prompt steps (long prompts)
  std::uint64_t prefill_yields = 0;  // iterations long prompts skipped for new requests
};

struct LoopStats {
  std::size_t queued = 0;
  std::size_t running = 0;
  std::size_t served = 0;
  BatchStats batching;
};

class StepLoop {
 public:
  // `slots` generations run at once; `max_queue` wait behind them (more is
  // a 503). The model is used from the loop's thread only.
  // `prefill_chunk` bounds the prompt tokens of long prompts one iteration reads.
  StepLoop(LlamaModel& model, std::size_t slots, std::size_t max_queue,
           std::size_t prefill_chunk = 256);
  ~StepLoop();
  StepLoop(const StepLoop&) = delete;
  StepLoop& operator=(const StepLoop&) = delete;

  // Throws ApiError 503 when the queue is full or the loop is stopping.
  void submit(std::shared_ptr<Job> job);
  // Refuses new work, fails queued jobs with a 503 and cancels running ones.
  void shutdown();
  LoopStats stats() const;

 private:
  struct Live {
    std::shared_ptr<Job> job;
    std::unique_ptr<Generation> gen;
    std::size_t seq = 0;
    std::size_t done_tokens = 0;  // of the current call, already stepped (chunks)
    std::size_t calls = 0;        // model calls completed (a new request's first two stream)
    std::exception_ptr error;
  };
  void run();
  void admit(std::vector<Live>& live, std::vector<std::size_t>& free_seqs);
  void step(std::vector<Live>& live);
  void retire(std::vector<Live>& live, std::vector<std::size_t>& free_seqs);

  LlamaModel& model_;
  const std::size_t slots_, max_queue_, prefill_chunk_;
  WorkerPool pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::shared_ptr<Job>> running_;  // what shutdown() cancels
  LoopStats stats_;
  std::size_t prefill_turn_ = 0;   // which long prompt reads first (round robin)
  std::size_t yields_in_row_ = 0;  // iterations in a row long prompts have yielded
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nextok::server
