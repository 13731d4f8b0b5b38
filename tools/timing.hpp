// Repeated timing of a callable: warm-up, then medians and p99 in µs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace nextok::tools {

struct Timing {
  double median_us = 0, p99_us = 0;
  std::size_t iters = 0;
};

template <typename F>
Timing time_calls(F&& f, double budget_s, std::size_t max_iters, int warmup = 3) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> us;
  const auto start = clock::now();
  while (
      us.size() < max_iters &&
      (us.size() < 5 || std::chrono::duration<double>(clock::now() - start).count() < budget_s)) {
    const auto t0 = clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  Timing t;
  t.iters = us.size();
  t.median_us = us[us.size() / 2];
  t.p99_us =
      us[std::min(us.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(us.size())))];
  return t;
}

}  // namespace nextok::tools
