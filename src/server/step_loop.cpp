#include "step_loop.hpp"

#include <algorithm>
#include <exception>

#include "memory.hpp"
#include "nextok/error.hpp"

namespace nextok::server {

namespace {

// The token callback: channels for logprob routing, events for streams, and
// false (cancel) once the client has gone.
TokenCallback callback_for(Job& job) {
  const bool want_channels = job.options.sampler.top_logprobs_k > 0;
  return [&job, want_channels](const TokenEvent& ev) {
    if (want_channels) job.channels.push_back(ev.channel);
    if (job.stream) {
      JobEvent out{ev.token, ev.channel, ev.forced, ev.reasoning, ev.content, std::nullopt};
      if (ev.logprobs) out.logprobs = *ev.logprobs;
      job.push(std::move(out));
    }
    return !job.cancelled();
  };
}

}  // namespace

StepLoop::StepLoop(LlamaModel& model, std::size_t slots, std::size_t max_queue,
                   std::size_t prefill_chunk)
    : model_(model),
      slots_(slots),
      max_queue_(max_queue),
      prefill_chunk_(std::max<std::size_t>(1, prefill_chunk)),
      pool_(static_cast<unsigned>(
          std::min<std::size_t>(slots, std::max(1u, std::thread::hardware_concurrency())))) {
  if (slots == 0) throw Error(ErrorCode::kInvalidArgument, "parallel", "at least one slot");
  thread_ = std::thread([this] { run(); });
}

StepLoop::~StepLoop() {
  shutdown();
  thread_.join();
}

void StepLoop::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      throw ApiError(503, "server_error", "the server is shutting down", {}, "shutting_down");
    }
    if (queue_.size() >= max_queue_) {
      throw ApiError(503, "server_error",
                     "the server is busy (" + std::to_string(queue_.size()) +
                         " requests waiting); retry later",
                     {}, "server_overloaded");
    }
    job->queued_at = std::chrono::steady_clock::now();
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void StepLoop::shutdown() {
  std::deque<std::shared_ptr<Job>> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
    for (auto& job : running_) job->cancel();
  }
  cv_.notify_all();
  for (auto& job : dropped) {
    job->error = ApiError(503, "server_error", "the server is shutting down", {}, "shutting_down");
    job->finish();
  }
}

LoopStats StepLoop::stats() const {
  std::lock_guard lock(mu_);
  LoopStats s = stats_;
  s.queued = queue_.size();
  s.running = running_.size();
  return s;
}

void StepLoop::run() {
  std::vector<Live> live;
  std::vector<std::size_t> free_seqs;
  for (std::size_t i = 0; i < slots_; ++i) free_seqs.push_back(model_.add_sequence());
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !live.empty(); });
      if (stopping_ && live.empty()) return;
    }
    admit(live, free_seqs);
    step(live);
    retire(live, free_seqs);
  }
}

// Free slots take queued jobs in arrival order, by cost: a long prompt
// (more than one prefill chunk) may hold at most slots - 1 slots, so with
// two or more slots a short request never waits for whole prefills; the
// long ones keep their order among themselves. A job whose options the
// generation refuses finishes at once with that error.
void StepLoop::admit(std::vector<Live>& live, std::vector<std::size_t>& free_seqs) {
  const std::size_t long_cap = std::max<std::size_t>(1, slots_ - 1);
  auto is_long = [&](const Job& j) { return j.prompt.size() > prefill_chunk_; };
  std::size_t long_live = 0;
  for (const Live& l : live) long_live += is_long(*l.job) ? 1 : 0;
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::lock_guard lock(mu_);
      if (stopping_ || queue_.empty() || free_seqs.empty()) return;
      auto it = queue_.begin();
      if (long_live >= long_cap) {
        it =
            std::find_if(queue_.begin(), queue_.end(), [&](const auto& j) { return !is_long(*j); });
        if (it == queue_.end()) return;
      }
      job = std::move(*it);
      queue_.erase(it);
      running_.push_back(job);
      if (is_long(*job)) ++long_live;
    }
    Live l;
    l.job = job;
    l.seq = free_seqs.back();
    free_seqs.pop_back();
    try {
      model_.truncate_sequence(l.seq, 0);
      l.gen = std::make_unique<Generation>(model_.tokenizer().vocab(), model_.logits_width(),
                                           job->prompt, job->options, callback_for(*job));
    } catch (...) {
      l.error = std::current_exception();
    }
    live.push_back(std::move(l));
  }
}

void StepLoop::step(std::vector<Live>& live) {
  std::vector<Live*> singles, others, partial;
  std::vector<std::size_t> ids;
  std::vector<std::int32_t> tokens;
  for (Live& l : live) {
    if (l.error || l.gen->done()) continue;
    if (l.job->cancelled()) {
      l.gen->cancel();
      continue;
    }
    const Generation::Call& call = l.gen->next_call();
    if (l.done_tokens == 0) {
      try {
        if (model_.sequence_length(l.seq) > call.keep) model_.truncate_sequence(l.seq, call.keep);
      } catch (...) {
        l.error = std::current_exception();
        continue;
      }
    }
    if (!call.all_logits && call.tokens.size() - l.done_tokens > prefill_chunk_) {
      partial.push_back(&l);  // one more chunk of a long call; no rows yet
    } else if (call.tokens.size() == 1 && !call.all_logits) {
      singles.push_back(&l);
      ids.push_back(l.seq);
      tokens.push_back(call.tokens[0]);
    } else {
      others.push_back(&l);
    }
  }
  // Long prompts share one chunk of prompt tokens per iteration, taking
  // turns, so an iteration costs at most a chunk more than the decode batch
  // however many long prompts are being read. A new short request's first
  // token would otherwise wait for two chunks (its prompt step, then the step
  // whose logits it streams), each dearer than a fresh one at a long context:
  // the chunk yields to those calls, never more than two iterations in a row,
  // so long prompts still read at least every third iteration.
  auto fresh = [&](const Live* l) {
    return l->calls < 2 && l->job->prompt.size() <= prefill_chunk_;
  };
  const bool fresh_short = std::any_of(singles.begin(), singles.end(), fresh) ||
                           std::any_of(others.begin(), others.end(), fresh);
  const bool yield = !partial.empty() && fresh_short && yields_in_row_ < 2;
  yields_in_row_ = yield ? yields_in_row_ + 1 : 0;
  std::size_t budget = yield ? 0 : prefill_chunk_, chunks = 0;
  for (std::size_t j = 0; j < partial.size() && budget > 0; ++j) {
    Live* l = partial[(prefill_turn_ + j) % partial.size()];
    const auto part = l->gen->next_call().tokens.subspan(l->done_tokens, budget);
    try {
      model_.step(l->seq, part, false);
      l->done_tokens += part.size();
    } catch (...) {
      l->error = std::current_exception();
    }
    budget -= part.size();
    ++chunks;
  }
  if (chunks > 0) ++prefill_turn_;
  std::vector<Live*> stepped(singles);
  stepped.insert(stepped.end(), others.begin(), others.end());
  if (stepped.empty()) {
    std::lock_guard lock(mu_);
    stats_.batching.prefill_chunks += chunks;
    return;
  }
  // The next masks while the model runs.
  pool_.start([&](std::size_t i) { stepped[i]->gen->prepare(); }, stepped.size());
  for (Live* l : others) {
    const Generation::Call& call = l->gen->next_call();
    try {
      model_.step(l->seq, call.tokens.subspan(l->done_tokens), call.all_logits);
    } catch (...) {
      l->error = std::current_exception();
    }
    l->done_tokens = 0;
  }
  if (!singles.empty()) {
    try {
      model_.step_batch(ids, tokens);
    } catch (...) {
      // step_batch checks every row before it computes: find the culprits.
      for (Live* l : singles) {
        try {
          model_.step(l->seq, l->gen->next_call().tokens, false);
        } catch (...) {
          l->error = std::current_exception();
        }
      }
    }
  }
  pool_.wait();
  std::vector<LogitsView> rows(stepped.size());
  for (std::size_t i = 0; i < stepped.size(); ++i) {
    if (!stepped[i]->error) rows[i] = model_.sequence_logits(stepped[i]->seq);
  }
  // Every row is sampled (and its tokens emitted) at once.
  pool_.start(
      [&](std::size_t i) {
        Live& l = *stepped[i];
        if (l.error) return;
        ++l.calls;
        try {
          l.gen->feed(rows[i]);
        } catch (...) {
          l.error = std::current_exception();
        }
      },
      stepped.size());
  pool_.wait();
  std::lock_guard lock(mu_);
  stats_.batching.other_steps += others.size();
  stats_.batching.prefill_chunks += chunks;
  stats_.batching.prefill_yields += yield ? 1 : 0;
  if (!singles.empty()) {
    ++stats_.batching.batches;
    stats_.batching.batched_tokens += singles.size();
    stats_.batching.largest = std::max<std::uint64_t>(stats_.batching.largest, singles.size());
  }
}

void StepLoop::retire(std::vector<Live>& live, std::vector<std::size_t>& free_seqs) {
  std::vector<Live> keep;
  bool retired = false;
  for (Live& l : live) {
    if (!l.error && !l.gen->done()) {
      keep.push_back(std::move(l));
      continue;
    }
    Job& job = *l.job;
    if (l.error) {
      job.error = ApiError::from_exception(l.error);
    } else {
      job.result = l.gen->take_result();
    }
    free_seqs.push_back(l.seq);
    std::lock_guard lock(mu_);
    if (stopping_ && job.cancelled() && !job.error) {
      job.error = ApiError(503, "server_error", "the server is shutting down", {}, "shutting_down");
    }
    job.finish();
    running_.erase(std::find(running_.begin(), running_.end(), l.job));
    ++stats_.served;
    retired = true;
  }
  live.swap(keep);
  if (!retired || !live.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (!queue_.empty()) return;
  }
  // The last request out hands the heap's free pages back (a busy server
  // reuses them; an idle one should not sit on a burst's high-water mark).
  release_free_memory();
}

}  // namespace nextok::server
