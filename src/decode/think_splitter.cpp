// ThinkSplitter: marker detection across piece boundaries.
#include <algorithm>

#include "nextok/error.hpp"
#include "nextok/think.hpp"
#include "nextok/vocab.hpp"

namespace nextok {

namespace {

// Length of the longest suffix of `text` that is a proper prefix of `marker`.
size_t partial_marker_suffix(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (marker.starts_with(text.substr(text.size() - n))) return n;
  }
  return 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

const char* channel_name(Channel channel) noexcept {
  return channel == Channel::kReasoning ? "reasoning" : "content";
}

ThinkOptions think_options_for(const Vocabulary& vocab, std::string_view rendered,
                               std::optional<std::uint32_t> budget) {
  ThinkOptions opt;
  if (!vocab.find(opt.open) || !vocab.find(opt.close)) {
    if (budget) {
      throw Error(ErrorCode::kInvalidArgument, "thinking_budget",
                  "this model's vocabulary has no <think> / </think> tokens");
    }
    return opt;
  }
  opt.enabled = true;
  opt.budget = budget;
  const auto pos = rendered.rfind(opt.open);
  opt.starts_open =
      pos != std::string_view::npos && rendered.find(opt.close, pos) == std::string_view::npos &&
      rendered.find_first_not_of(" \n", pos + opt.open.size()) == std::string_view::npos;
  return opt;
}

void ThinkOptions::validate() const {
  if (!enabled) return;
  if (open.empty() || close.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "think", "think markers must not be empty");
  }
  if (open == close) {
    throw Error(ErrorCode::kInvalidArgument, "think", "the open and close markers are equal");
  }
}

ThinkSplitter::ThinkSplitter(ThinkOptions options) : options_(std::move(options)) {
  options_.validate();
  state_ = !options_.enabled      ? State::kContent
           : options_.starts_open ? State::kThink
                                  : State::kStart;
}

void ThinkSplitter::push(std::string_view piece, Routed& out) {
  const bool was_think = state_ == State::kThink;
  held_.append(piece);
  route(out, false);
  if (was_think && state_ == State::kThink) account_thinking_piece();
}

void ThinkSplitter::flush(Routed& out) {
  route(out, true);
}

void ThinkSplitter::route(Routed& out, bool at_end) {
  for (;;) {
    switch (state_) {
      case State::kStart: {
        // An opening marker counts only at the start (after whitespace).
        const auto first = std::find_if_not(held_.begin(), held_.end(), is_space);
        const std::string_view rest(first, held_.end());
        if (rest.empty() && !at_end) return;
        if (rest.starts_with(options_.open)) {
          held_.erase(0, held_.size() - rest.size() + options_.open.size());
          state_ = State::kThink;
          continue;
        }
        if (!at_end && std::string_view(options_.open).starts_with(rest)) return;
        state_ = State::kContent;
        continue;
      }
      case State::kThink: {
        const size_t pos = held_.find(options_.close);
        if (pos != std::string::npos) {
          out.reasoning.append(held_, 0, pos);
          held_.erase(0, pos + options_.close.size());
          state_ = State::kContent;
          continue;
        }
        const size_t keep = at_end ? 0 : partial_marker_suffix(held_, options_.close);
        out.reasoning.append(held_, 0, held_.size() - keep);
        held_.erase(0, held_.size() - keep);
        return;
      }
      case State::kContent:
        out.content.append(held_);
        held_.clear();
        return;
    }
  }
}

}  // namespace nextok
