#include "constraint/engine/length_bounds.hpp"

#include <algorithm>
#include <deque>

#include "constraint/engine/code_points.hpp"
#include "constraint/schema/grammar.hpp"

namespace nextok::constraint {

std::shared_ptr<const LengthBounds> LengthBounds::shared_of(const Dfa& d) {
  return std::make_shared<const LengthBounds>(of(d));
}

LengthBounds LengthBounds::of(const Dfa& d) {
  const size_t n = d.states() * kPhases;
  LengthBounds lb;
  lb.min_rem.assign(n, kUnbounded);
  lb.max_rem.assign(n, kUnbounded);
  // Edges (state, phase) → (state', phase') weighted by the code points a
  // byte starts (0 or 1), each distinct edge once (the stamp). A run of
  // bytes that lead to the same state and count alike in every phase is
  // stepped once, so a state costs its few runs per phase rather than 256.
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> rev(n), fwd(n);
  std::vector<uint32_t> stamp(2 * n, UINT32_MAX);  // (to, weight) → last `from` that added it
  std::vector<std::pair<int32_t, uint8_t>> moves;  // (next state, the first byte of a run)
  for (size_t q = 0; q < d.states(); ++q) {
    moves.clear();
    for (int b = 0; b < 256; ++b) {
      const int32_t q2 = d.next(static_cast<int32_t>(q), static_cast<uint8_t>(b));
      if (q2 < 0) continue;
      const uint8_t cls = kCodePointClasses.of[b];
      if (!moves.empty() && moves.back().first == q2 &&
          kCodePointClasses.of[moves.back().second] == cls)
        continue;
      moves.push_back({q2, static_cast<uint8_t>(b)});
    }
    for (uint8_t e = 0; e < kPhases; ++e) {
      const auto from = static_cast<uint32_t>(q * kPhases + e);
      for (const auto& [q2, b] : moves) {
        const uint8_t s = kCodePointSteps[e][b];
        const auto to = static_cast<uint32_t>(static_cast<size_t>(q2) * kPhases + (s & 15));
        const auto w = static_cast<uint8_t>(s >> 4);
        if (stamp[2 * to + w] == from) continue;
        stamp[2 * to + w] = from;
        rev[to].push_back({from, w});
        fwd[from].push_back({to, w});
      }
    }
  }
  // Fewest: 0-1 BFS backwards from the accepting states.
  std::deque<uint32_t> work;
  for (size_t k = 0; k < n; ++k) {
    if (d.accepting(static_cast<int32_t>(k / kPhases))) {
      lb.min_rem[k] = 0;
      work.push_back(static_cast<uint32_t>(k));
    }
  }
  while (!work.empty()) {
    const uint32_t t = work.front();
    work.pop_front();
    for (auto [f, w] : rev[t]) {
      if (lb.min_rem[t] + w < lb.min_rem[f]) {
        lb.min_rem[f] = lb.min_rem[t] + w;
        if (w)
          work.push_back(f);
        else
          work.push_front(f);
      }
    }
  }
  // Most: longest path over the nodes that can still accept, peeled from
  // the ends; nodes on or before a cycle never peel and stay unbounded.
  std::vector<uint32_t> pending(n, 0);
  for (size_t k = 0; k < n; ++k) {
    if (lb.min_rem[k] == kUnbounded) continue;
    lb.max_rem[k] = 0;  // so far: stopping (accepting) or the best successor seen
    for (auto [t, w] : fwd[k]) pending[k] += lb.min_rem[t] != kUnbounded;
    if (pending[k] == 0) work.push_back(static_cast<uint32_t>(k));
  }
  while (!work.empty()) {
    const uint32_t t = work.front();
    work.pop_front();
    for (auto [f, w] : rev[t]) {
      if (lb.min_rem[f] == kUnbounded || pending[f] == 0) continue;
      lb.max_rem[f] = std::max(lb.max_rem[f], lb.max_rem[t] + w);
      if (--pending[f] == 0) work.push_back(f);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (lb.min_rem[k] == kUnbounded) continue;
    if (pending[k] > 0) lb.max_rem[k] = kUnbounded;  // reaches a cycle
    if (!d.final(static_cast<int32_t>(k / kPhases)) && lb.max_rem[k] != kUnbounded)
      lb.unbounded = false;
  }
  return lb;
}

}  // namespace nextok::constraint
