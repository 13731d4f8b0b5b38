// Walkers kept by a grammar for all its matchers. A walker's table maps
// states named by content (lasting names and its own projection numbers),
// so it holds across requests: a matcher borrows a walker for a mask and
// gives it back, and the next request of the same grammar finds the states
// already stepped. Each walker serves one thread at a time.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "constraint/cfg/earley_walker.hpp"

namespace nextok::constraint::cfg {

class WalkerPool {
 public:
  class Loan {
   public:
    Loan(WalkerPool& pool, std::unique_ptr<EarleyWalker> w) : pool_(pool), w_(std::move(w)) {}
    Loan(const Loan&) = delete;
    Loan& operator=(const Loan&) = delete;
    ~Loan() { pool_.give_back(std::move(w_)); }
    EarleyWalker& operator*() const noexcept { return *w_; }
    EarleyWalker* operator->() const noexcept { return w_.get(); }

   private:
    WalkerPool& pool_;
    std::unique_ptr<EarleyWalker> w_;
  };

  Loan borrow() {
    std::unique_ptr<EarleyWalker> w;
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        w = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!w) w = std::make_unique<EarleyWalker>();
    return Loan(*this, std::move(w));
  }

 private:
  // Walkers beyond this many (more threads at once) are dropped on return:
  // each holds up to a few MiB of tables.
  static constexpr size_t kKept = 4;
  void give_back(std::unique_ptr<EarleyWalker> w) {
    std::lock_guard lock(mu_);
    if (free_.size() < kKept) free_.push_back(std::move(w));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<EarleyWalker>> free_;
};

}  // namespace nextok::constraint::cfg
