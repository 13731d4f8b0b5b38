#include "model/cpu/thread_pool.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define NEXTOK_PAUSE() _mm_pause()
#else
#define NEXTOK_PAUSE() std::this_thread::yield()
#endif

namespace nextok::model {

namespace {
constexpr int kSpins = 1 << 14;  // ~50 µs of spinning before a worker sleeps
}

ThreadPool::ThreadPool(unsigned threads) {
  n_ = threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < n_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run(const std::function<void(unsigned)>& fn) {
  if (n_ == 1) {
    fn(0);
    return;
  }
  job_ = &fn;
  pending_.store(n_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(0);
  // Spin briefly, then yield: on a busy machine a worker may wait for a core.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpins) {
      NEXTOK_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < kSpins; ++spin) {
      NEXTOK_PAUSE();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = g;
    if (stop_.load()) return;
    (*job_)(index);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace nextok::model
