#include "vocab/utf8.hpp"

namespace nextok::vocab {

size_t utf8_sequence_length(std::string_view s, size_t i, size_t* need) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 < 0x80) {
    if (need) *need = 1;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    if (need) *need = 0;
    return 0;
  }
  if (need) *need = n;
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return n;
}

size_t utf8_first_invalid(std::string_view s) noexcept {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII runs 8 bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t w = 0;
      for (int k = 0; k < 8; ++k) w |= uint64_t{static_cast<unsigned char>(s[i + k])} << (8 * k);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= s.size()) break;
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// Length of the maximal prefix of a valid sequence at s[i] (at least 1).
static size_t maximal_subpart(std::string_view s, size_t i) noexcept {
  size_t need = 0;
  utf8_sequence_length(s, i, &need);
  if (need <= 1) return 1;
  const auto b0 = static_cast<unsigned char>(s[i]);
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 == 0xE0) lo = 0xA0;
  if (b0 == 0xED) hi = 0x9F;
  if (b0 == 0xF0) lo = 0x90;
  if (b0 == 0xF4) hi = 0x8F;
  size_t k = 1;
  for (; k < need && i + k < s.size(); ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
  }
  return k;
}

size_t utf8_complete_prefix(std::string_view s) noexcept {
  // Only the last three bytes can start an unfinished character.
  const size_t from = s.size() > 3 ? s.size() - 3 : 0;
  for (size_t i = from; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0xC0) continue;  // ASCII or a continuation byte
    size_t need = 0;
    utf8_sequence_length(s, i, &need);
    if (need > s.size() - i && maximal_subpart(s, i) == s.size() - i) return i;
  }
  return s.size();
}

void utf8_append_replacing(std::string_view s, std::string& out) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8_sequence_length(s, i);
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      i += maximal_subpart(s, i);
    }
  }
}

uint32_t utf8_next(std::string_view s, size_t& i) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    i += 1;
    return b0;
  }
  const size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
  uint32_t cp = b0 & (0x7Fu >> n);
  for (size_t k = 1; k < n && i + k < s.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  }
  i += n;
  return cp;
}

}  // namespace nextok::vocab
