#include "job.hpp"

namespace nextok::server {

void Job::push(JobEvent event) {
  {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

void Job::finish() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

Job::Wait Job::next(JobEvent& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty() || done_; }))
    return Wait::kTimeout;
  if (events_.empty()) return Wait::kDone;
  out = std::move(events_.front());
  events_.pop_front();
  return Wait::kEvent;
}

void Job::wait_done() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return done_; });
}

}  // namespace nextok::server
