// A fork-join pool for the model's kernels: a step runs hundreds of short
// parallel sections, so workers spin briefly before they sleep.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace nextok::model {

class ThreadPool {
 public:
  // `threads` in all, the caller included; 0 = the hardware's count.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const noexcept { return n_; }
  // Runs fn(i) for i in [0, size()) — i = 0 on the caller — and waits.
  void run(const std::function<void(unsigned)>& fn);

  // The part [begin, end) of n items that thread i of `parts` takes.
  static void split(std::size_t n, unsigned i, unsigned parts, std::size_t& begin,
                    std::size_t& end) noexcept {
    begin = n * i / parts;
    end = n * (i + 1) / parts;
  }

 private:
  void worker(unsigned index);

  unsigned n_;
  std::vector<std::thread> threads_;
  const std::function<void(unsigned)>* job_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace nextok::model
