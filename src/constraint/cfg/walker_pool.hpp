// Walkers kept by a grammar for all its matchers. A walker's tables hold
// across requests (the Earley walker's states are named by content, the
// DFA walker's by DFA state): a matcher borrows a walker for a mask and
// gives it back, and the next request of the same grammar finds its work
// already done. Each walker serves one thread at a time.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace nextok::constraint::cfg {

template <class Walker>
class WalkerPool {
 public:
  class Loan {
   public:
    Loan(WalkerPool& pool, std::unique_ptr<Walker> w) : pool_(pool), w_(std::move(w)) {}
    Loan(const Loan&) = delete;
    Loan& operator=(const Loan&) = delete;
    ~Loan() { pool_.give_back(std::move(w_)); }
    Walker& operator*() const noexcept { return *w_; }
    Walker* operator->() const noexcept { return w_.get(); }

   private:
    WalkerPool& pool_;
    std::unique_ptr<Walker> w_;
  };

  Loan borrow() {
    std::unique_ptr<Walker> w;
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        w = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!w) w = std::make_unique<Walker>();
    return Loan(*this, std::move(w));
  }

 private:
  // Walkers beyond this many (more threads at once) are dropped on return:
  // each holds up to a few MiB of tables.
  static constexpr size_t kKept = 4;
  void give_back(std::unique_ptr<Walker> w) {
    std::lock_guard lock(mu_);
    if (free_.size() < kKept) free_.push_back(std::move(w));
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<Walker>> free_;
};

}  // namespace nextok::constraint::cfg
