// Benchmark workloads: logits rows and the four configs of `nextok bench host`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nextok/config.hpp"

namespace nextok::tools {

// Realistic long-tailed logits: a bulk of N(0, 2.5²) over the whole
// vocabulary plus a 256-token head at 18 - 2.2·ln(1+j) + N(0, 0.3²) on random
// ids, so a few tokens hold most of the mass and the tail is long.
std::vector<float> realistic_logits(std::int64_t vocab, std::uint64_t seed);
// Flat worst case: N(0, 0.01²) everywhere, so any nucleus is huge.
std::vector<float> flat_logits(std::int64_t vocab, std::uint64_t seed);

struct BenchConfig {
  std::string name;  // greedy | temp | full | flat_top_p
  bool flat = false;
  SamplerConfig sampler;
  PenaltyConfig penalties;
  std::vector<std::int32_t> history;
};

std::vector<BenchConfig> host_bench_configs(std::int64_t vocab, std::uint64_t seed);

}  // namespace nextok::tools
