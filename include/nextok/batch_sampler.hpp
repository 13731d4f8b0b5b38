// Many requests' next tokens from one [B, V] logits batch on a pool of
// threads: what an engine or the server's loop calls once per step.
// Rows are independent (each Sampler owns its seed stream, penalty window
// and scratch memory), so row b's result is bit for bit what
// samplers[b]->next(row b, masks[b]) gives alone, whatever the thread count.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "nextok/sampler.hpp"

namespace nextok {

// Fork-join over rows: run(rows, fn) calls fn(b, ws) once for each row,
// spread over the threads (the caller's included), each thread with its own
// Workspace; rows are taken one at a time, so uneven rows balance. Idle
// threads spin for ~100 µs before they sleep, since a greedy row takes
// ~10 µs and a wake-up longer. Runs from several threads take turns.
class RowPool {
 public:
  explicit RowPool(unsigned threads = 0);  // 0 = every hardware thread
  ~RowPool();
  RowPool(const RowPool&) = delete;
  RowPool& operator=(const RowPool&) = delete;
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }
  // Exceptions stay with their row: errors[b] (when given, size rows)
  // holds row b's; without it the first row's error is rethrown after
  // every row ran.
  void run(std::size_t rows, const std::function<void(std::size_t, Workspace&)>& fn,
           std::span<std::exception_ptr> errors = {});

 private:
  void work(std::size_t slot);
  void drain(std::size_t slot);

  std::vector<std::thread> workers_;
  std::vector<Workspace> spaces_;
  std::mutex run_mu_;  // one run at a time
  std::mutex mu_;
  std::condition_variable start_;
  std::size_t sleeping_ = 0;  // guarded by mu_
  bool stop_ = false;         // guarded by mu_
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::size_t> busy_{0};
  std::atomic<std::size_t> next_{0};
  // The current run: written before generation_ moves, read after.
  const std::function<void(std::size_t, Workspace&)>* fn_ = nullptr;
  std::size_t rows_ = 0;
  std::span<std::exception_ptr> errors_;
};

struct BatchStep {
  StepResult step;
  std::exception_ptr error;  // set when this row failed (its sampler unchanged)
};

// Row b of `logits` through samplers[b] (with masks[b] when masks is not
// empty). samplers.size() and masks.size() must equal logits.rows.
std::vector<BatchStep> sample_batch(RowPool& pool, const LogitsView& logits,
                                    std::span<Sampler* const> samplers,
                                    std::span<const std::span<const std::uint32_t>> masks = {});

}  // namespace nextok
