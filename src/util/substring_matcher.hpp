// How much of a fixed string ends the text read so far, one byte at a time
// (Knuth-Morris-Pratt): the begin tag a tool-call constraint watches for in
// free text, the closing tag a raw XML-style value may not hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nextok::util {

class SubstringMatcher {
 public:
  SubstringMatcher() = default;
  explicit SubstringMatcher(std::string s) : s_(std::move(s)), pi_(s_.size(), 0) {
    for (size_t i = 1, k = 0; i < s_.size(); ++i) {
      while (k > 0 && s_[i] != s_[k]) k = pi_[k - 1];
      if (s_[i] == s_[k]) ++k;
      pi_[i] = static_cast<uint32_t>(k);
    }
  }

  // k bytes of the string matched (k < size()), then byte b: how many now.
  uint32_t next(uint32_t k, uint8_t b) const noexcept {
    while (k > 0 && static_cast<uint8_t>(s_[k]) != b) k = pi_[k - 1];
    return static_cast<uint8_t>(s_[k]) == b ? k + 1 : k;
  }
  size_t size() const noexcept { return s_.size(); }

 private:
  std::string s_;
  std::vector<uint32_t> pi_;  // per prefix length - 1: its longest proper border
};

}  // namespace nextok::util
