#include "worker_pool.hpp"

namespace nextok::server {

WorkerPool::WorkerPool(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { worker(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::start(std::function<void(std::size_t)> task, std::size_t count) {
  {
    std::lock_guard lock(mu_);
    task_ = std::move(task);
    next_ = 0;
    count_ = count;
  }
  work_cv_.notify_all();
}

// Runs the next task of the batch, if any, with the lock released meanwhile.
bool WorkerPool::run_one(std::unique_lock<std::mutex>& lock) {
  if (next_ >= count_) return false;
  const std::size_t i = next_++;
  ++running_;
  lock.unlock();
  task_(i);
  lock.lock();
  if (--running_ == 0 && next_ >= count_) done_cv_.notify_all();
  return true;
}

void WorkerPool::wait() {
  std::unique_lock lock(mu_);
  while (run_one(lock)) {
  }
  done_cv_.wait(lock, [&] { return running_ == 0; });
  task_ = nullptr;
  count_ = 0;
}

void WorkerPool::worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || next_ < count_; });
    if (stop_) return;
    run_one(lock);
  }
}

}  // namespace nextok::server
