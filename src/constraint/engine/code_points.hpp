// Counting the code points of a JSON string literal byte by byte, as
// minLength/maxLength need: a table from (escape phase, byte) to the next
// phase and whether a code point starts.
#pragma once

#include <array>
#include <cstdint>

namespace nextok::constraint {

inline constexpr int kEscapePhases = 10;

// Code points of a JSON string literal, counted as its bytes go by: raw
// UTF-8 at lead bytes, escapes once each, a \u surrogate pair once. One
// step: the next escape phase (low 4 bits) and whether a code point starts
// here (bit 4).
constexpr uint8_t code_point_step(uint8_t esc, uint8_t b) noexcept {
  // A code point counts when it starts: at a raw lead byte, or at the
  // backslash of an escape (the second half of a \u surrogate pair, phase
  // 9, does not count again). Counting at the start keeps maxLength from
  // admitting a prefix that cannot be finished.
  constexpr auto step = [](int e, bool counts) {
    return static_cast<uint8_t>(e | (counts ? 16 : 0));
  };
  switch (esc) {
    case 0:
    case 9:
      if (b == '\\') return step(1, esc == 0);
      return step(0, b != '"' && (b & 0xC0) != 0x80);
    case 1:
      return step(b == 'u' ? 2 : 0, false);
    case 2:  // first hex digit: 'd' may start a surrogate
      return step((b | 0x20) == 'd' ? 3 : 4, false);
    case 3:  // D8-DB: a high surrogate, whose pair follows
      return step((b >= '8' && b <= '9') || (b | 0x20) == 'a' || (b | 0x20) == 'b' ? 7 : 5, false);
    case 4:
      return step(5, false);
    case 5:
      return step(6, false);
    case 7:
      return step(8, false);
    case 8:
      return step(9, false);
    default:
      return step(0, false);
  }
}

using CountTable = std::array<std::array<uint8_t, 256>, kEscapePhases>;

constexpr CountTable make_count_table() noexcept {
  CountTable t{};
  for (int e = 0; e < kEscapePhases; ++e)
    for (int b = 0; b < 256; ++b)
      t[e][b] = code_point_step(static_cast<uint8_t>(e), static_cast<uint8_t>(b));
  return t;
}

inline constexpr CountTable kCodePointSteps = make_count_table();

// Bytes that step alike in every phase share a class (a dozen classes).
struct CodePointClasses {
  std::array<uint8_t, 256> of{};
  int count = 0;
};

constexpr CodePointClasses make_code_point_classes() noexcept {
  CodePointClasses c;
  for (int b = 0; b < 256; ++b) {
    int k = 0;
    for (; k < b; ++k) {
      bool same = true;
      for (int e = 0; e < kEscapePhases && same; ++e)
        same = kCodePointSteps[e][b] == kCodePointSteps[e][k];
      if (same) break;
    }
    c.of[b] = k < b ? c.of[k] : static_cast<uint8_t>(c.count++);
  }
  return c;
}

inline constexpr CodePointClasses kCodePointClasses = make_code_point_classes();

}  // namespace nextok::constraint
