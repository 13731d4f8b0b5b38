#include "nextok/batch_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "nextok/error.hpp"

namespace nextok {

namespace {

void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

RowPool::RowPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  spaces_.resize(threads);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
}

RowPool::~RowPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

void RowPool::drain(std::size_t slot) {
  for (;;) {
    const std::size_t b = next_.fetch_add(1, std::memory_order_relaxed);
    if (b >= rows_) return;
    try {
      (*fn_)(b, spaces_[slot]);
    } catch (...) {
      errors_[b] = std::current_exception();
    }
  }
}

void RowPool::work(std::size_t slot) {
  using clock = std::chrono::steady_clock;
  std::uint64_t seen = 0;
  for (;;) {
    // Spin a little: the next run of a decode loop usually comes soon.
    const auto until = clock::now() + std::chrono::microseconds(100);
    bool woke = false;
    for (unsigned i = 0; !woke; ++i) {
      woke = generation_.load(std::memory_order_acquire) != seen;
      if (woke || (i % 64 == 0 && clock::now() > until)) break;
      relax();
    }
    if (!woke) {
      std::unique_lock lock(mu_);
      ++sleeping_;
      start_.wait(lock,
                  [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      --sleeping_;
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    drain(slot);
    busy_.fetch_sub(1, std::memory_order_release);
  }
}

void RowPool::run(std::size_t rows, const std::function<void(std::size_t, Workspace&)>& fn,
                  std::span<std::exception_ptr> errors) {
  std::vector<std::exception_ptr> own;
  if (errors.empty()) {
    own.resize(rows);
    errors = own;
  } else if (errors.size() != rows) {
    throw Error(ErrorCode::kInvalidArgument, "errors",
                "one error slot per row: " + std::to_string(errors.size()) + " for " +
                    std::to_string(rows));
  }
  std::lock_guard turn(run_mu_);
  fn_ = &fn;
  rows_ = rows;
  errors_ = errors;
  next_.store(0, std::memory_order_relaxed);
  // A single row, or a pool of one, runs on the caller alone.
  const bool fan_out = rows > 1 && !workers_.empty();
  if (fan_out) {
    busy_.store(workers_.size(), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    std::lock_guard lock(mu_);
    if (sleeping_ > 0) start_.notify_all();
  }
  drain(0);
  if (fan_out) {
    while (busy_.load(std::memory_order_acquire) != 0) relax();
  }
  for (const auto& e : own)
    if (e) std::rethrow_exception(e);
}

std::vector<BatchStep> sample_batch(RowPool& pool, const LogitsView& logits,
                                    std::span<Sampler* const> samplers,
                                    std::span<const std::span<const std::uint32_t>> masks) {
  const auto rows = static_cast<std::size_t>(std::max<std::int64_t>(0, logits.rows));
  if (samplers.size() != rows) {
    throw Error(
        ErrorCode::kInvalidArgument, "samplers",
        std::to_string(samplers.size()) + " samplers for " + std::to_string(rows) + " logits rows");
  }
  if (!masks.empty() && masks.size() != rows) {
    throw Error(
        ErrorCode::kInvalidArgument, "masks",
        std::to_string(masks.size()) + " masks for " + std::to_string(rows) + " logits rows");
  }
  for (std::size_t b = 0; b < rows; ++b) {
    if (samplers[b] == nullptr) {
      throw Error(ErrorCode::kInvalidArgument, "samplers",
                  "sampler " + std::to_string(b) + " is null");
    }
  }
  std::vector<BatchStep> out(rows);
  std::vector<std::exception_ptr> errors(rows);
  pool.run(
      rows,
      [&](std::size_t b, Workspace&) {
        const std::span<const std::uint32_t> m =
            masks.empty() ? std::span<const std::uint32_t>{} : masks[b];
        out[b].step = samplers[b]->next(logits.row(static_cast<std::int64_t>(b)), m);
      },
      errors);
  for (std::size_t b = 0; b < rows; ++b) out[b].error = errors[b];
  return out;
}

}  // namespace nextok
