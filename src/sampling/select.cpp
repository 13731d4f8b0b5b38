// Stages 7-9 over a candidate list, without sorting it: a three-pass radix
// select on the key bits finds the boundary key, then only the boundary tie
// group is ordered (by id).
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "sampling/stages.hpp"

namespace nextok::stages {
namespace {

// Order-preserving map float → uint32 (larger float → larger integer).
inline std::uint32_t order_bits(float f) noexcept {
  if (f == 0.0f) f = 0.0f;  // fold -0 into +0
  const auto u = std::bit_cast<std::uint32_t>(f);
  return (u & 0x80000000U) != 0 ? ~u : (u | 0x80000000U);
}

struct Boundary {
  bool found = false;     // false: the whole list does not reach the target
  std::uint32_t key = 0;  // order_bits of the boundary key v
  double above = 0.0;     // measure of candidates with key > v
};

constexpr int kDigitBits = 11;
constexpr std::uint32_t kMaxBuckets = 1U << kDigitBits;

// Finds v with measure(key > v) < target <= measure(key >= v), where the
// measure is the summed weight (by_mass) or the count. The digits start
// below the bits every key shares (a flat row's weights all lie in
// [0.95, 1]: the top 11 bits would put them in one bucket, and every pass
// would move all of them); the first, largest pass adds into four
// interleaved histograms, so equal buckets do not form one chain of
// dependent adds.
// A few candidates: sorted outright. Clearing the radix passes' 2,048-bucket
// histograms would cost more than the whole select (a peaked row's
// candidates are a handful).
constexpr std::size_t kSortedSelect = 64;

Boundary sorted_boundary(std::span<const Candidate> c, double target, bool by_mass,
                         Workspace::Impl& ws) {
  std::vector<Candidate>& s = ws.scratch;
  s.assign(c.begin(), c.end());
  std::sort(s.begin(), s.end(), [](const Candidate& x, const Candidate& y) {
    return order_bits(x.key) > order_bits(y.key);
  });
  Boundary b;
  for (std::size_t i = 0; i < s.size();) {
    const std::uint32_t key = order_bits(s[i].key);
    double group = 0.0;
    std::size_t j = i;
    for (; j < s.size() && order_bits(s[j].key) == key; ++j)
      group += by_mass ? static_cast<double>(s[j].weight) : 1.0;
    if (b.above + group >= target) {
      b.found = true;
      b.key = key;
      return b;
    }
    b.above += group;
    i = j;
  }
  return Boundary{};  // never reached: keep everything
}

Boundary radix_boundary(std::span<const Candidate> c, double target, bool by_mass,
                        Workspace::Impl& ws) {
  static thread_local std::array<std::array<double, kMaxBuckets>, 4> hists;
  Boundary b;
  if (c.empty()) return b;
  if (c.size() <= kSortedSelect) return sorted_boundary(c, target, by_mass, ws);
  // Four lanes: one min/max chain would wait on each compare.
  std::array<float, 4> los{c[0].key, c[0].key, c[0].key, c[0].key}, his = los;
  std::size_t j = 0;
  for (; j + 4 <= c.size(); j += 4)
    for (std::size_t l = 0; l < 4; ++l) {
      los[l] = std::min(los[l], c[j + l].key);
      his[l] = std::max(his[l], c[j + l].key);
    }
  for (; j < c.size(); ++j) {
    los[0] = std::min(los[0], c[j].key);
    his[0] = std::max(his[0], c[j].key);
  }
  const float lo = std::min(std::min(los[0], los[1]), std::min(los[2], los[3]));
  const float hi = std::max(std::max(his[0], his[1]), std::max(his[2], his[3]));
  auto measure = [&](const Candidate& x) { return by_mass ? static_cast<double>(x.weight) : 1.0; };
  const std::uint32_t khi = order_bits(hi);
  int bits = 32 - std::countl_zero(khi ^ order_bits(lo));  // the bits that differ
  if (bits == 0) {                                         // one key: one tie group
    double total = 0.0;
    for (const Candidate& x : c) total += measure(x);
    if (total < target) return b;
    b.found = true;
    b.key = khi;
    return b;
  }
  std::uint32_t prefix = bits == 32 ? 0U : khi & ~((std::uint32_t{1} << bits) - 1U);
  std::span<const Candidate> cur = c;
  std::vector<Candidate>* bufs[2] = {&ws.scratch, &ws.scratch2};
  for (int pass = 0; bits > 0; ++pass) {
    const int width = std::min(bits, kDigitBits);
    bits -= width;
    const int shift = bits;
    const std::uint32_t nb = std::uint32_t{1} << width;
    const int ways = pass == 0 && cur.size() >= 4 * nb ? 4 : 1;
    for (int h = 0; h < ways; ++h)
      std::fill(hists[static_cast<std::size_t>(h)].begin(),
                hists[static_cast<std::size_t>(h)].begin() + nb, 0.0);
    auto bucket = [&](const Candidate& x) { return (order_bits(x.key) >> shift) & (nb - 1U); };
    std::size_t i = 0;
    if (ways == 4) {
      for (; i + 4 <= cur.size(); i += 4)
        for (std::size_t h = 0; h < 4; ++h) hists[h][bucket(cur[i + h])] += measure(cur[i + h]);
    }
    for (; i < cur.size(); ++i) hists[0][bucket(cur[i])] += measure(cur[i]);
    std::uint32_t chosen = nb;
    for (std::uint32_t k = nb; k-- > 0;) {
      double in_bucket = hists[0][k];
      for (int h = 1; h < ways; ++h) in_bucket += hists[static_cast<std::size_t>(h)][k];
      if (b.above + in_bucket >= target) {
        chosen = k;
        break;
      }
      b.above += in_bucket;
    }
    if (chosen == nb) return Boundary{};  // never reached: keep everything
    prefix |= chosen << shift;
    if (bits == 0) break;
    // Keep only the chosen bucket for the next, finer pass.
    const std::uint32_t hi_mask = ~((std::uint32_t{1} << shift) - 1U);
    std::vector<Candidate>& out = *bufs[pass % 2];
    out.resize(cur.size());
    std::size_t n = 0;
    for (const Candidate& x : cur) {  // branch-free: most are dropped, unpredictably
      out[n] = x;
      n += (order_bits(x.key) & hi_mask) == prefix ? 1 : 0;
    }
    out.resize(n);
    cur = out;
  }
  b.found = true;
  b.key = prefix;
  return b;
}

// Splits c into: key above the boundary (kept), the boundary tie group
// (returned in ws.scratch, sorted by id ascending), and below (dropped).
void split_at(std::vector<Candidate>& c, std::uint32_t key, Workspace::Impl& ws) {
  ws.scratch.clear();
  std::size_t kept = 0;
  for (const Candidate& x : c) {
    const std::uint32_t k = order_bits(x.key);
    c[kept] = x;  // branch-free keep (kept <= the index read)
    kept += k > key ? 1 : 0;
    if (k == key) ws.scratch.push_back(x);
  }
  c.resize(kept);
  std::sort(ws.scratch.begin(), ws.scratch.end(),
            [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
}

// c[0, mid) and c[mid, end) are each sorted by id; make the whole list so.
void merge_by_id(std::vector<Candidate>& c, std::size_t mid) {
  std::inplace_merge(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(mid), c.end(),
                     [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
}

}  // namespace

void filter_top_p(std::vector<Candidate>& c, double limit, TiePolicy ties, Workspace::Impl& ws) {
  const Boundary b = radix_boundary(c, limit, /*by_mass=*/true, ws);
  if (!b.found) return;
  split_at(c, b.key, ws);
  const std::size_t kept = c.size();
  if (ties == TiePolicy::kKeepAllTies) {
    c.insert(c.end(), ws.scratch.begin(), ws.scratch.end());
  } else {
    // Ascending order breaks ties by ascending id, so walking down from the
    // top meets the tie group in descending id order.
    double before = b.above;
    auto first = ws.scratch.end();
    while (first != ws.scratch.begin() && before < limit) {
      --first;
      before += static_cast<double>(first->weight);
    }
    c.insert(c.end(), first, ws.scratch.end());
  }
  merge_by_id(c, kept);
}

void filter_top_k(std::vector<Candidate>& c, std::int64_t k, Workspace::Impl& ws) {
  if (static_cast<std::int64_t>(c.size()) <= k) return;
  const Boundary b = radix_boundary(c, static_cast<double>(k), /*by_mass=*/false, ws);
  if (!b.found) return;
  split_at(c, b.key, ws);
  const std::size_t kept = c.size();
  const auto room = static_cast<std::size_t>(k - static_cast<std::int64_t>(kept));
  c.insert(c.end(), ws.scratch.begin(),
           ws.scratch.begin() + static_cast<std::ptrdiff_t>(std::min(room, ws.scratch.size())));
  merge_by_id(c, kept);
}

void filter_below(std::vector<Candidate>& c, float threshold) {
  std::erase_if(c, [threshold](const Candidate& x) { return x.key < threshold; });
}

}  // namespace nextok::stages
