#include "workloads.hpp"

#include <cmath>
#include <random>

namespace nextok::tools {

std::vector<float> realistic_logits(std::int64_t vocab, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> bulk(0.0f, 2.5f);
  std::normal_distribution<float> jitter(0.0f, 0.3f);
  std::vector<float> l(static_cast<std::size_t>(vocab));
  for (float& x : l) x = bulk(gen);
  std::uniform_int_distribution<std::int64_t> pick(0, vocab - 1);
  for (int j = 0; j < 256; ++j) {
    l[static_cast<std::size_t>(pick(gen))] =
        18.0f - 2.2f * std::log(1.0f + static_cast<float>(j)) + jitter(gen);
  }
  return l;
}

std::vector<float> flat_logits(std::int64_t vocab, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> d(0.0f, 0.01f);
  std::vector<float> l(static_cast<std::size_t>(vocab));
  for (float& x : l) x = d(gen);
  return l;
}

std::vector<BenchConfig> host_bench_configs(std::int64_t vocab, std::uint64_t seed) {
  std::mt19937_64 gen(seed ^ 0x5eed);
  std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(vocab - 1));
  std::vector<BenchConfig> out;

  BenchConfig greedy{"greedy", false, {}, {}, {}};
  out.push_back(greedy);

  BenchConfig temp{"temp", false, {}, {}, {}};
  temp.sampler.temperature = 0.7f;
  out.push_back(temp);

  BenchConfig full{"full", false, {}, {}, {}};
  full.sampler.temperature = 0.7f;
  full.sampler.top_p = 0.9f;
  full.sampler.top_k = 50;
  full.sampler.min_p = 0.05f;
  full.penalties.repetition_penalty = 1.1f;
  full.penalties.presence_penalty = 0.5f;
  full.penalties.frequency_penalty = 0.3f;
  for (int i = 0; i < 8; ++i)
    full.penalties.logit_bias.emplace_back(id(gen), static_cast<float>(i % 5) - 2.0f);
  std::vector<std::int32_t> pool;
  for (int i = 0; i < 12; ++i) pool.push_back(id(gen));
  for (int i = 0; i < 20; ++i) full.history.push_back(pool[static_cast<std::size_t>(i * 7 % 12)]);
  out.push_back(full);

  BenchConfig flat{"flat_top_p", true, {}, {}, {}};
  flat.sampler.temperature = 1.0f;
  flat.sampler.top_p = 0.95f;
  out.push_back(flat);
  return out;
}

}  // namespace nextok::tools
