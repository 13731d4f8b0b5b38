// The extension's worker pool (worker_pool.hpp).
#include "worker_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace nextok::py {

namespace {

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  // Runs the job on `extra` workers plus the caller. Holds run_mu_.
  void run(std::size_t n, std::size_t extra, const std::function<void(std::size_t)>& fn) {
    grow(extra);
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      n_ = n;
      next_.store(0);
      error_ = nullptr;
      active_ = extra;
      wanted_ = extra;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return active_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  std::mutex run_mu_;  // one batch at a time on the pool

 private:
  void grow(std::size_t extra) {
    while (workers_.size() < extra) workers_.emplace_back([this] { loop(); });
  }

  void work() {
    for (;;) {
      const std::size_t i = next_.fetch_add(1);
      if (i >= n_) return;
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }

  void loop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && wanted_ > 0); });
        if (stop_) return;
        seen = generation_;
        --wanted_;
      }
      work();
      {
        std::lock_guard lock(mu_);
        if (--active_ == 0) done_.notify_all();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::exception_ptr error_;
  std::size_t active_ = 0;  // workers still in this generation
  std::size_t wanted_ = 0;  // workers still to join this generation
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

// One pool per process: a forked child (multiprocessing) gets a new one, as
// the parent's threads do not exist there. The old one is leaked on purpose.
Pool& pool() {
  static Pool* p = nullptr;
  static pid_t owner = 0;
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (p == nullptr || owner != getpid()) {
    p = new Pool();
    owner = getpid();
  }
  return *p;
}

}  // namespace

std::size_t hardware_threads() noexcept {
  // Read once: hardware_concurrency() reads /sys on every call (microseconds).
  static const std::size_t n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

namespace {

void serial_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  std::exception_ptr error;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      fn(i);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  if (threads > n) threads = n;
  if (threads <= 1) return serial_for(n, fn);
  Pool& p = pool();
  std::unique_lock lock(p.run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return serial_for(n, fn);
  p.run(n, threads - 1, fn);
}

}  // namespace nextok::py
