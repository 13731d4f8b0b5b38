// A few threads for one kind of request work. At a low priority (nice +10)
// for the CPU-heavy work hostile input can cause — compiling schemas,
// parsing big bodies — so that it slows the decode loop and the streams as
// little as possible; the number of threads also bounds how many such jobs
// (and their scratch memory) exist at once.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nextok::server {

class BackgroundPool {
 public:
  explicit BackgroundPool(std::size_t threads, int nice = 10);
  ~BackgroundPool();
  BackgroundPool(const BackgroundPool&) = delete;
  BackgroundPool& operator=(const BackgroundPool&) = delete;

  // Runs `f` on a pool thread and waits for it; rethrows what it threw.
  void run(const std::function<void()>& f);
  std::size_t busy() const;  // tasks running now

 private:
  struct Task;
  void work(int nice);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task*> queue_;
  std::size_t busy_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nextok::server
