// An open-addressing hash map from 64-bit keys to small values, for the
// walker's tables that are read at every Earley step (states and projections
// by content hash, sub-projections): one probe into flat arrays, no node
// allocation per entry, and a clear that keeps the memory.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nextok::constraint::cfg {

template <class V>
class FlatMap {
 public:
  // The value stored for key, or nullptr.
  const V* find(uint64_t key) const {
    if (size_ == 0) return nullptr;
    for (size_t h = slot(key);; h = (h + 1) & mask_) {
      if (!used_[h]) return nullptr;
      if (keys_[h] == key) return &vals_[h];
    }
  }
  // Sets key's value, adding the key if new.
  void set(uint64_t key, V value) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    size_t h = slot(key);
    for (; used_[h]; h = (h + 1) & mask_) {
      if (keys_[h] == key) {
        vals_[h] = value;
        return;
      }
    }
    used_[h] = 1;
    keys_[h] = key;
    vals_[h] = value;
    ++size_;
  }
  void clear() {
    if (size_ == 0) return;
    std::fill(used_.begin(), used_.end(), 0);
    size_ = 0;
  }
  size_t size() const noexcept { return size_; }

 private:
  size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow() {
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<V> vals = std::move(vals_);
    std::vector<uint8_t> used = std::move(used_);
    const size_t cap = std::max<size_t>(64, keys.size() * 2);
    keys_.assign(cap, 0);
    vals_.assign(cap, V{});
    used_.assign(cap, 0);
    mask_ = cap - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (used[i]) set(keys[i], vals[i]);
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<V> vals_;
  std::vector<uint8_t> used_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace nextok::constraint::cfg
