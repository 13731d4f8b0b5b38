#include "vocab/bpe.hpp"

#include <algorithm>
#include <cstddef>
#include <queue>

namespace nextok::vocab {

namespace {
constexpr size_t kScanLimit = 64;
constexpr uint32_t kNoRank = ~0u;

inline uint32_t rank_of(uint64_t v) noexcept {
  return v == PairTable::kEmpty ? kNoRank : static_cast<uint32_t>(v >> 32);
}
}  // namespace

void bpe_merge_scan(const PairTable& merges, std::vector<uint32_t>& ids) {
  const size_t n0 = ids.size();
  if (n0 < 2) return;
  // found[i] caches the merge of (ids[i], ids[i+1]).
  uint64_t found_buf[kScanLimit];
  std::vector<uint64_t> found_vec;
  uint64_t* found = found_buf;
  if (n0 > kScanLimit) {
    found_vec.resize(n0);
    found = found_vec.data();
  }
  size_t n = n0;
  for (size_t i = 0; i + 1 < n; ++i) found[i] = merges.find(ids[i], ids[i + 1]);
  while (n > 1) {
    uint32_t best_rank = kNoRank;
    size_t best = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      const uint32_t r = rank_of(found[i]);
      if (r < best_rank) {
        best_rank = r;
        best = i;
      }
    }
    if (best_rank == kNoRank) break;
    ids[best] = static_cast<uint32_t>(found[best]);
    std::copy(ids.begin() + static_cast<std::ptrdiff_t>(best) + 2,
              ids.begin() + static_cast<std::ptrdiff_t>(n),
              ids.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    if (best + 2 < n) std::copy(found + best + 2, found + n - 1, found + best + 1);
    --n;
    if (best > 0) found[best - 1] = merges.find(ids[best - 1], ids[best]);
    if (best + 1 < n) found[best] = merges.find(ids[best], ids[best + 1]);
  }
  ids.resize(n);
}

void bpe_merge_heap(const PairTable& merges, std::vector<uint32_t>& ids) {
  const size_t n = ids.size();
  if (n < 2) return;
  // Symbols form a linked list over the original positions; a queued merge
  // is stale when either side has changed since it was pushed.
  std::vector<int32_t> prev(n), next(n);
  std::vector<uint8_t> alive(n, 1);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  struct Item {
    uint32_t rank;
    uint32_t pos;
    uint32_t left, right;  // the ids the merge was computed for
    bool operator>(const Item& o) const noexcept {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  auto push = [&](size_t pos) {
    const int32_t nx = next[pos];
    if (nx < 0) return;
    const uint64_t v = merges.find(ids[pos], ids[static_cast<size_t>(nx)]);
    if (v != PairTable::kEmpty) {
      heap.push({static_cast<uint32_t>(v >> 32), static_cast<uint32_t>(pos), ids[pos],
                 ids[static_cast<size_t>(nx)]});
    }
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Item top = heap.top();
    heap.pop();
    const size_t pos = top.pos;
    if (!alive[pos] || next[pos] < 0) continue;
    const auto right = static_cast<size_t>(next[pos]);
    if (ids[pos] != top.left || ids[right] != top.right) continue;
    const uint64_t v = merges.find(ids[pos], ids[right]);
    ids[pos] = static_cast<uint32_t>(v);
    alive[right] = 0;
    next[pos] = next[right];
    if (next[right] >= 0) prev[static_cast<size_t>(next[right])] = static_cast<int32_t>(pos);
    if (prev[pos] >= 0) push(static_cast<size_t>(prev[pos]));
    push(pos);
  }
  size_t w = 0;
  for (int32_t i = 0; i >= 0; i = next[static_cast<size_t>(i)])
    ids[w++] = ids[static_cast<size_t>(i)];
  ids.resize(w);
}

void bpe_merge(const PairTable& merges, std::vector<uint32_t>& ids) {
  if (ids.size() <= kScanLimit) {
    bpe_merge_scan(merges, ids);
  } else {
    bpe_merge_heap(merges, ids);
  }
}

}  // namespace nextok::vocab
