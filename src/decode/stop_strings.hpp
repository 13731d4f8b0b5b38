// StopStrings: finds stop strings in streamed text, across token boundaries.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace nextok::decode {

class StopStrings {
 public:
  static constexpr size_t kMaxStrings = 16;
  static constexpr size_t kMaxBytes = 1024;

  // Throws kInvalidArgument ("stop") for an empty string, more than
  // kMaxStrings strings or one longer than kMaxBytes.
  explicit StopStrings(std::vector<std::string> stops);

  bool empty() const noexcept { return stops_.empty(); }
  // Appends text; returns what is safe to release. Text that may be the start
  // of a stop string is held back. On a match, returns the text before it
  // and matched() turns true; everything after is dropped.
  std::string push(std::string_view text);
  // Releases what is held back (the output ended without a match).
  std::string flush();
  bool matched() const noexcept { return matched_; }
  const std::string& matched_string() const noexcept { return stops_[which_]; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
  size_t which_ = 0;
};

}  // namespace nextok::decode
