#include "support/scripted_model.hpp"

#include <algorithm>

#include "nextok/error.hpp"

namespace nextok::testing {

namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

ScriptedModel::ScriptedModel(ScriptedModelOptions options) : opt_(std::move(options)) {
  hashes_.push_back(mix(opt_.seed));
  if (opt_.threaded) thread_ = std::thread([this] { worker(); });
}

ScriptedModel::~ScriptedModel() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
}

void ScriptedModel::fill_row(std::uint64_t hash, std::size_t generated, float* out) const {
  // Two 16-bit uniforms per hash keep this cheap at V = 151,936.
  const float scale = opt_.noise / 65536.0f;
  std::uint64_t h = hash;
  for (std::size_t i = 0; i < opt_.width; i += 4) {
    h = mix(h);
    for (std::size_t j = 0; j < 4 && i + j < opt_.width; ++j) {
      out[i + j] = static_cast<float>((h >> (16 * j)) & 0xFFFF) * scale;
    }
  }
  if (generated < opt_.script.size()) {
    const auto t = static_cast<std::size_t>(opt_.script[generated]);
    if (t < opt_.width) out[t] += opt_.boost;
  }
}

std::vector<float> ScriptedModel::row_after(std::span<const std::int32_t> context,
                                            std::size_t prompt_length) const {
  std::uint64_t h = mix(opt_.seed);
  for (std::int32_t t : context)
    h = mix(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(t)));
  std::vector<float> row(opt_.width);
  const std::size_t generated = context.size() - prompt_length;
  fill_row(h, generated, row.data());
  return row;
}

void ScriptedModel::step(std::span<const std::int32_t> tokens, bool all_logits) {
  if (opt_.step_time.count() > 0) std::this_thread::sleep_for(opt_.step_time);
  const std::int64_t n = all_logits ? static_cast<std::int64_t>(tokens.size()) : 1;
  rows_.resize(static_cast<std::size_t>(n) * opt_.width);
  n_rows_ = n;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    context_.push_back(tokens[i]);
    hashes_.push_back(
        mix(hashes_.back() ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(tokens[i]))));
    const bool keep = all_logits || i + 1 == tokens.size();
    if (!keep) continue;
    const std::size_t r = all_logits ? i : 0;
    const std::size_t generated = context_.size() - prompt_length_;
    fill_row(hashes_.back(), generated, rows_.data() + r * opt_.width);
  }
  ++steps_run_;
}

void ScriptedModel::submit(std::function<void()> task) {
  if (!opt_.threaded) {
    task();
    return;
  }
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
    ++busy_;
  }
  cv_.notify_all();
}

void ScriptedModel::worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (stop_) return;
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
    --busy_;
    cv_.notify_all();
  }
}

void ScriptedModel::wait_idle() {
  if (!opt_.threaded) return;
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return busy_ == 0; });
}

void ScriptedModel::enqueue(std::span<const std::int32_t> tokens, bool all_logits) {
  if (tokens.empty()) throw Error(ErrorCode::kInvalidArgument, "tokens", "empty step");
  if (queued_length_ == 0) prompt_length_ = tokens.size();
  queued_length_ += tokens.size();
  submit([this, copy = std::vector<std::int32_t>(tokens.begin(), tokens.end()), all_logits] {
    step(copy, all_logits);
  });
}

LogitsView ScriptedModel::logits() {
  wait_idle();
  return LogitsView::f32_rows(rows_.data(), n_rows_, static_cast<std::int64_t>(opt_.width));
}

void ScriptedModel::truncate(std::size_t length) {
  wait_idle();
  if (length > context_.size()) throw Error(ErrorCode::kInvalidArgument, "length", "past the end");
  context_.resize(length);
  hashes_.resize(length + 1);
  queued_length_ = length;
}

void ScriptedModel::enqueue_pick() {
  {
    std::lock_guard lock(mu_);
    picks_.emplace_back();
  }
  submit([this] {
    const auto* row = rows_.data() + static_cast<std::size_t>(n_rows_ - 1) * opt_.width;
    const auto best = static_cast<std::int32_t>(std::max_element(row, row + opt_.width) - row);
    std::lock_guard lock(mu_);
    last_pick_ = best;
    for (auto& p : picks_) {
      if (!p) {
        p = best;
        break;
      }
    }
    ++picks_made_;
    cv_.notify_all();
  });
}

void ScriptedModel::enqueue_step_on_pick() {
  queued_length_ += 1;
  submit([this] {
    std::int32_t t;
    {
      std::lock_guard lock(mu_);
      t = last_pick_;
    }
    step(std::span(&t, 1), false);
  });
}

std::int32_t ScriptedModel::read_pick() {
  std::unique_lock lock(mu_);
  if (picks_.empty()) throw Error(ErrorCode::kInvalidArgument, "pick", "no pick queued");
  cv_.wait(lock, [&] { return picks_.front().has_value(); });
  const std::int32_t t = *picks_.front();
  picks_.pop_front();
  return t;
}

std::vector<std::int32_t> ScriptedModel::context() {
  wait_idle();
  return context_;
}

}  // namespace nextok::testing
