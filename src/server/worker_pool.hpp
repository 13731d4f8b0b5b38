// A few threads that run one batch of independent tasks at a time while the
// caller does other work (the server loop computes masks during the model
// step, and samples every row at once after it).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nextok::server {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts task(i) for i in [0, count) on the workers and returns at once.
  // One batch at a time: wait() before the next start().
  void start(std::function<void(std::size_t)> task, std::size_t count);
  // Waits until every task of the batch has run (the caller helps).
  void wait();

 private:
  void worker();
  bool run_one(std::unique_lock<std::mutex>& lock);

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::function<void(std::size_t)> task_;
  std::size_t next_ = 0, count_ = 0, running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nextok::server
