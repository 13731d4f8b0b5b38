// Internal scratch for the pipeline stages; owned by nextok::Workspace.
#pragma once

#include <cstdint>
#include <vector>

#include "nextok/sampler.hpp"

namespace nextok {

// One surviving token during filtering. `key` orders tokens (probability
// weight in spec mode, float log-probability in mlx_lm mode); `weight` is its
// unnormalised probability mass.
struct Candidate {
  float key;
  float weight;
  std::int32_t id;
};

struct Workspace::Impl {
  std::vector<float> w;             // working logits after stages 1-5
  std::vector<float> e;             // unnormalised weights after stage 6
  std::vector<double> block_sums;   // per-kSumBlock sums of e
  std::vector<Candidate> cand;      // candidate / survivor list
  std::vector<Candidate> scratch;   // radix-select buffers
  std::vector<Candidate> scratch2;
  std::vector<std::int32_t> window; // sorted copy of the penalty window
  std::vector<std::int32_t> indices; // gather output (V)
  std::vector<float> head_w, head_e; // bounded-tail pass: logits and weights near the max
  std::vector<std::int32_t> head_pos; //   and positions in them above a ladder level

  void reserve(std::size_t vocab);
};

}  // namespace nextok
