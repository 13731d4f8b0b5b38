#include "background_pool.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <exception>

namespace nextok::server {

struct BackgroundPool::Task {
  const std::function<void()>* f;
  std::exception_ptr error;
  bool done = false;
};

BackgroundPool::BackgroundPool(std::size_t threads, int nice) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, threads); ++i)
    threads_.emplace_back([this, nice] { work(nice); });
}

BackgroundPool::~BackgroundPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BackgroundPool::run(const std::function<void()>& f) {
  Task task{&f, nullptr};
  {
    std::unique_lock lock(mu_);
    queue_.push_back(&task);
    cv_.notify_all();
    cv_.wait(lock, [&] { return task.done; });
  }
  if (task.error) std::rethrow_exception(task.error);
}

std::size_t BackgroundPool::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

void BackgroundPool::work(int nice) {
  // Linux: a thread's nice value is per thread (its tid is a "process").
  if (nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Task* t = queue_.front();
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    try {
      (*t->f)();
    } catch (...) {
      t->error = std::current_exception();
    }
    lock.lock();
    --busy_;
    t->done = true;
    cv_.notify_all();
  }
}

}  // namespace nextok::server
