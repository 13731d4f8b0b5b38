// Hashing and open-addressing tables for the vocabulary: token text → id and
// merge pair → (rank, new id). Both are built once per tokenizer and then
// only read, so they are flat arrays with linear probing.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace nextok::vocab {

inline uint64_t mix64(uint64_t x) noexcept {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}

// A fast non-cryptographic hash of a byte string (8 bytes per step).
inline uint64_t hash_bytes(std::string_view s) noexcept {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (s.size() * 0xff51afd7ed558ccdULL);
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ mix64(w)) * 0x9E3779B97F4A7C15ULL;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ mix64(w ^ (uint64_t{n} << 56))) * 0x9E3779B97F4A7C15ULL;
  }
  return mix64(h);
}

inline size_t table_capacity(size_t n) noexcept {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  return cap;
}

// Maps (left id, right id) of a BPE merge to its rank and the merged id.
class PairTable {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  void reserve(size_t n) {
    slots_.assign(table_capacity(n), Slot{kEmpty, 0});
    mask_ = slots_.size() - 1;
  }
  // Returns false when the pair is already present (the first rank wins).
  bool insert(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged) {
    const uint64_t key = (uint64_t{left} << 32) | right;
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) {
        slots_[i] = {key, (uint64_t{rank} << 32) | merged};
        return true;
      }
      if (slots_[i].key == key) return false;
    }
  }
  // (rank << 32 | merged id), or kEmpty when the pair never merges.
  uint64_t find(uint32_t left, uint32_t right) const noexcept {
    const uint64_t key = (uint64_t{left} << 32) | right;
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].val;
      if (slots_[i].key == kEmpty) return kEmpty;
    }
  }
  bool empty() const noexcept { return slots_.empty(); }

 private:
  struct Slot {
    uint64_t key, val;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace nextok::vocab
