#include "constraint/engine/home_states.hpp"

#include <algorithm>

namespace nextok::constraint {

void HomeStates::learn_ascii(int32_t q) {
  const auto k = static_cast<size_t>(q);
  for (int b = 0; b < 128; ++b)
    if (d_.next(q, static_cast<uint8_t>(b)) == q) loop_[k][b >> 6] |= uint64_t{1} << (b & 63);
  known_[k] = kAscii;
}

// RFC 3629: lead byte ranges and the ranges of the bytes after them.
bool HomeStates::chars_home(int32_t q) const {
  struct Range {
    uint8_t lo, hi;
  };
  struct Form {
    Range lead;
    Range next[3];
    int count;
  };
  static constexpr Range kCont{0x80, 0xBF};
  static constexpr Form kForms[] = {{{0xC2, 0xDF}, {kCont}, 1},
                                    {{0xE0, 0xE0}, {{0xA0, 0xBF}, kCont}, 2},
                                    {{0xE1, 0xEC}, {kCont, kCont}, 2},
                                    {{0xED, 0xED}, {{0x80, 0x9F}, kCont}, 2},
                                    {{0xEE, 0xEF}, {kCont, kCont}, 2},
                                    {{0xF0, 0xF0}, {{0x90, 0xBF}, kCont, kCont}, 3},
                                    {{0xF1, 0xF3}, {kCont, kCont, kCont}, 3},
                                    {{0xF4, 0xF4}, {{0x80, 0x8F}, kCont, kCont}, 3}};
  std::vector<int32_t> at, next;
  for (const Form& f : kForms) {
    at.clear();
    for (int b = f.lead.lo; b <= f.lead.hi; ++b) at.push_back(d_.next(q, static_cast<uint8_t>(b)));
    for (int step = 0; step < f.count; ++step) {
      next.clear();
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      for (int32_t s : at) {
        if (s < 0 || d_.final(s)) return false;  // a character's prefix must stay inside
        for (int b = f.next[step].lo; b <= f.next[step].hi; ++b)
          next.push_back(d_.next(s, static_cast<uint8_t>(b)));
      }
      at.swap(next);
    }
    for (int32_t s : at)
      if (s != q) return false;
  }
  return true;
}

}  // namespace nextok::constraint
