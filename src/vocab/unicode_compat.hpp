// Where HF `tokenizers`' Unicode data differs from the libraries we use, as
// measured over every code point by tests/python/test_tokenizers.py
// (tokenizers 0.23):
// - its normalizer gives these combining marks canonical combining class 0
//   (they are newer than its tables), so NFC/NFD never reorder across them;
//   utf8proc does;
// - Oniguruma counts these Unicode 15/16 digits and numerals as \p{N};
//   PCRE2 10.42 (Unicode 14) does not.
#pragma once

#include <cstdint>
#include <span>

namespace nextok::vocab {

struct CodeRange {
  uint32_t lo, hi;  // inclusive
};

inline constexpr CodeRange kMarksWithoutClassInHf[] = {
    {0x07FD, 0x07FD},   {0x0898, 0x089F},   {0x08CA, 0x08D3},   {0x09FE, 0x09FE},
    {0x0C3C, 0x0C3C},   {0x0D3B, 0x0D3C},   {0x0EBA, 0x0EBA},   {0x1715, 0x1715},
    {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFA},   {0xA82C, 0xA82C},   {0x10D24, 0x10D27},
    {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
    {0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E}, {0x11839, 0x1183A},
    {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0}, {0x11A34, 0x11A34},
    {0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45},
    {0x11D97, 0x11D97}, {0x11F41, 0x11F42}, {0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F},
    {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
};

inline constexpr CodeRange kNumbersNewerThanPcre2[] = {
    {0x10D40, 0x10D49}, {0x116D0, 0x116E3}, {0x11BF0, 0x11BF9}, {0x11F50, 0x11F59},
    {0x16130, 0x16139}, {0x16D70, 0x16D79}, {0x1CCF0, 0x1CCF9}, {0x1D2C0, 0x1D2D3},
    {0x1E4F0, 0x1E4F9}, {0x1E5F1, 0x1E5FA},
};

inline bool in_ranges(std::span<const CodeRange> ranges, uint32_t cp) noexcept {
  size_t lo = 0, hi = ranges.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (cp > ranges[mid].hi) {
      lo = mid + 1;
    } else if (cp < ranges[mid].lo) {
      hi = mid;
    } else {
      return true;
    }
  }
  return false;
}

}  // namespace nextok::vocab
