#include "decode/stop_strings.hpp"

#include <algorithm>

#include "nextok/error.hpp"

namespace nextok::decode {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  if (stops_.size() > kMaxStrings) {
    throw Error(ErrorCode::kInvalidArgument, "stop",
                "at most " + std::to_string(kMaxStrings) + " stop strings");
  }
  for (const auto& s : stops_) {
    if (s.empty()) throw Error(ErrorCode::kInvalidArgument, "stop", "a stop string is empty");
    if (s.size() > kMaxBytes) {
      throw Error(ErrorCode::kInvalidArgument, "stop",
                  "a stop string is longer than " + std::to_string(kMaxBytes) + " bytes");
    }
  }
}

std::string StopStrings::push(std::string_view text) {
  if (matched_) return {};
  if (stops_.empty()) return std::string(text);
  held_.append(text);
  // The earliest match wins; at equal starts the longer string.
  size_t best = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t pos = held_.find(stops_[i]);
    if (pos != std::string::npos &&
        (pos < best || (pos == best && stops_[i].size() > stops_[which_].size()))) {
      best = pos;
      which_ = i;
    }
  }
  if (best != std::string::npos) {
    matched_ = true;
    std::string out = held_.substr(0, best);
    held_.clear();
    return out;
  }
  // Hold back the longest suffix that begins some stop string.
  size_t keep = 0;
  for (const auto& s : stops_) {
    for (size_t n = std::min(held_.size(), s.size() - 1); n > keep; --n) {
      if (std::string_view(s).starts_with(std::string_view(held_).substr(held_.size() - n))) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStrings::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

}  // namespace nextok::decode
