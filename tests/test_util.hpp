// Shared helpers for the GoogleTest suites.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "nextok/nextok.hpp"

namespace nextok::test {

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
