// Shared helpers for the GoogleTest suites.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "nextok/nextok.hpp"

namespace nextok::test {

// χ² statistic over bins with expected count >= 5 (small bins pooled).
struct Chi2 {
  double stat = 0;
  int df = 0;
};

inline Chi2 chi2(const std::vector<double>& expected, const std::vector<double>& observed) {
  Chi2 c;
  double pe = 0, po = 0;
  int bins = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] >= 5) {
      c.stat += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
      ++bins;
    } else {
      pe += expected[i];
      po += observed[i];
    }
  }
  if (pe > 0) {
    c.stat += (po - pe) * (po - pe) / pe;
    ++bins;
  }
  c.df = bins - 1;
  return c;
}

// Upper bound well past the 0.9999 quantile (Wilson–Hilferty, z = 4).
inline double critical(int df) {
  const double k = df;
  const double t = 1 - 2 / (9 * k) + 4 * std::sqrt(2 / (9 * k));
  return k * t * t * t;
}

inline std::vector<float> probs_to_logits(const std::vector<float>& p) {
  std::vector<float> l;
  for (float x : p) l.push_back(x > 0 ? std::log(x) : -INFINITY);
  return l;
}

// Random logits with deliberate ties: values are rounded to a grid when
// `ties` is set, so equal logits are common.
inline std::vector<float> random_logits(std::mt19937_64& g, std::size_t v, bool ties) {
  std::normal_distribution<float> n(0.0f, 3.0f);
  std::vector<float> l(v);
  for (float& x : l) {
    x = n(g);
    if (ties) x = std::round(x * 2.0f) / 2.0f;
  }
  return l;
}

inline std::vector<std::uint32_t> full_mask(std::size_t v) {
  std::vector<std::uint32_t> m(bitmask_words(v), 0xFFFFFFFFu);
  return m;
}

}  // namespace nextok::test
