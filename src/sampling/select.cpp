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

constexpr std::array<int, 3> kShift = {21, 10, 0};
constexpr std::array<std::uint32_t, 3> kBuckets = {2048, 2048, 1024};

// Finds v with measure(key > v) < target <= measure(key >= v), where the
// measure is the summed weight (by_mass) or the count.
Boundary radix_boundary(std::span<const Candidate> c, double target, bool by_mass,
                        Workspace::Impl& ws) {
  static thread_local std::array<double, 2048> hist;
  Boundary b;
  std::uint32_t prefix = 0;
  std::span<const Candidate> cur = c;
  std::vector<Candidate>* bufs[2] = {&ws.scratch, &ws.scratch2};
  for (int pass = 0; pass < 3; ++pass) {
    const int shift = kShift[pass];
    const std::uint32_t nb = kBuckets[pass];
    std::fill(hist.begin(), hist.begin() + nb, 0.0);
    for (const Candidate& x : cur)
      hist[(order_bits(x.key) >> shift) & (nb - 1)] += by_mass ? static_cast<double>(x.weight) : 1.0;
    std::uint32_t chosen = nb;
    for (std::uint32_t k = nb; k-- > 0;) {
      if (b.above + hist[k] >= target) {
        chosen = k;
        break;
      }
      b.above += hist[k];
    }
    if (chosen == nb) return Boundary{};  // never reached: keep everything
    prefix |= chosen << shift;
    if (pass == 2) break;
    // Keep only the chosen bucket for the next, finer pass.
    const std::uint32_t hi_mask = ~((std::uint32_t{1} << shift) - 1);
    std::vector<Candidate>& out = *bufs[pass];
    out.clear();
    for (const Candidate& x : cur)
      if ((order_bits(x.key) & hi_mask) == prefix) out.push_back(x);
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
    if (k > key) {
      c[kept++] = x;
    } else if (k == key) {
      ws.scratch.push_back(x);
    }
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
