#include "constraint/regex/utf8_ranges.hpp"

#include <algorithm>

namespace nextok::constraint {

namespace {

constexpr uint32_t kMaxForLength[4] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};

void encode(uint32_t cp, uint8_t* b, int n) {
  if (n == 1) {
    b[0] = static_cast<uint8_t>(cp);
  } else if (n == 2) {
    b[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    b[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  } else if (n == 3) {
    b[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    b[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    b[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  } else {
    b[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
    b[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
    b[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    b[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  }
}

// [lo, hi] with both ends of the same encoded length n.
void split_same_length(uint32_t lo, uint32_t hi, int n, std::vector<std::vector<ByteRange>>& out) {
  // Split until every continuation position spans a full or aligned range:
  // for each suffix of k continuation bytes, lo and hi must agree on the
  // prefix or cover the whole 6k-bit block.
  for (int k = 1; k < n; ++k) {
    const uint32_t mask = (1u << (6 * k)) - 1;
    if ((lo & ~mask) != (hi & ~mask)) {
      if ((lo & mask) != 0) {
        split_same_length(lo, lo | mask, n, out);
        split_same_length((lo | mask) + 1, hi, n, out);
        return;
      }
      if ((hi & mask) != mask) {
        split_same_length(lo, (hi & ~mask) - 1, n, out);
        split_same_length(hi & ~mask, hi, n, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  encode(lo, a, n);
  encode(hi, b, n);
  std::vector<ByteRange> seq(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seq[static_cast<size_t>(i)] = {a[i], b[i]};
  out.push_back(std::move(seq));
}

}  // namespace

void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out) {
  hi = std::min<uint32_t>(hi, 0x10FFFF);
  if (lo > hi) return;
  // Surrogates have no UTF-8 encoding.
  if (lo <= 0xDFFF && hi >= 0xD800) {
    if (lo < 0xD800) utf8_sequences(lo, 0xD7FF, out);
    if (hi > 0xDFFF) utf8_sequences(0xE000, hi, out);
    return;
  }
  uint32_t start = lo;
  for (int n = 1; n <= 4 && start <= hi; ++n) {
    if (start > kMaxForLength[n - 1]) continue;
    const uint32_t end = std::min(hi, kMaxForLength[n - 1]);
    split_same_length(start, end, n, out);
    start = end + 1;
  }
}

}  // namespace nextok::constraint
