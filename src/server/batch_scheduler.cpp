#include "batch_scheduler.hpp"

#include <exception>

#include "nextok/error.hpp"

namespace nextok::server {

class BatchScheduler::Slot final : public Model {
 public:
  Slot(BatchScheduler& s, std::size_t seq) : sched_(s), seq_(seq) {}
  ~Slot() override { sched_.close(*this); }

  std::size_t logits_width() const override { return sched_.model_.logits_width(); }
  std::size_t context_length() const override { return length_; }
  void enqueue(std::span<const std::int32_t> tokens, bool all_logits) override {
    sched_.wait(*this);
    tokens_.assign(tokens.begin(), tokens.end());
    all_logits_ = all_logits;
    length_ += tokens.size();
    sched_.submit(*this);
  }
  LogitsView logits() override {
    sched_.wait(*this);
    if (error_) std::rethrow_exception(error_);
    return sched_.model_.sequence_logits(seq_);
  }
  void truncate(std::size_t length) override {
    sched_.wait(*this);
    sched_.model_.truncate_sequence(seq_, length);
    length_ = length;
    error_ = nullptr;
  }

 private:
  friend class BatchScheduler;
  BatchScheduler& sched_;
  std::size_t seq_;
  std::size_t length_ = 0;
  std::vector<std::int32_t> tokens_;
  bool all_logits_ = false;
  bool queued_ = false;  // guarded by the scheduler's mutex
  std::exception_ptr error_;
};

BatchScheduler::BatchScheduler(LlamaModel& model, std::size_t slots,
                               std::chrono::microseconds gather)
    : model_(model), gather_(gather) {
  if (slots == 0) throw Error(ErrorCode::kInvalidArgument, "parallel", "at least one slot");
  for (std::size_t i = 0; i < slots; ++i) seqs_.push_back(model_.add_sequence());
  thread_ = std::thread([this] { loop(); });
}

BatchScheduler::~BatchScheduler() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

std::unique_ptr<Model> BatchScheduler::open(std::size_t slot) {
  const std::size_t seq = seqs_.at(slot);
  model_.truncate_sequence(seq, 0);
  std::lock_guard lock(mu_);
  ++active_;
  return std::make_unique<Slot>(*this, seq);
}

void BatchScheduler::close(Slot& slot) {
  {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return !slot.queued_; });
    --active_;
  }
  work_cv_.notify_all();  // a gather may have been waiting for this slot
}

void BatchScheduler::submit(Slot& slot) {
  {
    std::lock_guard lock(mu_);
    if (stop_) throw Error(ErrorCode::kInvalidArgument, "server", "the scheduler has stopped");
    slot.queued_ = true;
    slot.error_ = nullptr;
    queue_.push_back(&slot);
  }
  work_cv_.notify_all();
}

void BatchScheduler::wait(Slot& slot) {
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] { return !slot.queued_; });
}

BatchStats BatchScheduler::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void BatchScheduler::loop() {
  std::vector<Slot*> steps;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      // Give every active slot a moment to queue its step, so they share one
      // pass over the weights.
      work_cv_.wait_for(lock, gather_, [&] { return stop_ || queue_.size() >= active_; });
      steps.swap(queue_);
    }
    run(steps);
    {
      std::lock_guard lock(mu_);
      for (Slot* s : steps) s->queued_ = false;
    }
    done_cv_.notify_all();
    steps.clear();
  }
}

void BatchScheduler::run(std::vector<Slot*>& steps) {
  std::vector<std::size_t> ids;
  std::vector<std::int32_t> tokens;
  std::vector<Slot*> singles;
  std::uint64_t others = 0;
  for (Slot* s : steps) {
    if (s->tokens_.size() == 1 && !s->all_logits_) {
      singles.push_back(s);
      ids.push_back(s->seq_);
      tokens.push_back(s->tokens_[0]);
      continue;
    }
    ++others;
    try {
      model_.step(s->seq_, s->tokens_, s->all_logits_);
    } catch (...) {
      s->error_ = std::current_exception();
    }
  }
  if (!singles.empty()) {
    try {
      model_.step_batch(ids, tokens);
    } catch (...) {
      // step_batch checks every row before it computes; find the culprits.
      for (Slot* s : singles) {
        try {
          model_.step(s->seq_, s->tokens_, false);
        } catch (...) {
          s->error_ = std::current_exception();
        }
      }
    }
  }
  std::lock_guard lock(mu_);
  stats_.other_steps += others;
  if (!singles.empty()) {
    ++stats_.batches;
    stats_.batched_tokens += singles.size();
    stats_.largest = std::max<std::uint64_t>(stats_.largest, singles.size());
  }
}

}  // namespace nextok::server
