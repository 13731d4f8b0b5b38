// Google Benchmark micro-benchmarks of the CPU kernels, per ISA.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "backend/cpu/kernels.hpp"

namespace cpu = nextok::cpu;

namespace {

std::vector<float> logits(std::size_t n) {
  std::mt19937_64 g(1);
  std::normal_distribution<float> d(0.0f, 2.5f);
  std::vector<float> x(n);
  for (float& v : x) v = d(g);
  return x;
}

void register_all() {
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    for (std::size_t n : {32000u, 151936u, 262144u}) {
      const std::string suffix = std::string("/") + k->name + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(("argmax_f32" + suffix).c_str(), [k, n](benchmark::State& s) {
        const auto x = logits(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->argmax_f32(x.data(), n, nullptr));
      });
      benchmark::RegisterBenchmark(("load_f32" + suffix).c_str(), [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> d(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->load_f32(x.data(), n, nullptr, d.data()));
      });
      benchmark::RegisterBenchmark(("max_f32" + suffix).c_str(), [k, n](benchmark::State& s) {
        const auto x = logits(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->max_f32(x.data(), n));
      });
      benchmark::RegisterBenchmark(("exp_weights" + suffix).c_str(), [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> e(n);
        std::vector<double> bs(n / cpu::kSumBlock + 1);
        for (auto _ : s)
          benchmark::DoNotOptimize(k->exp_weights(x.data(), n, {1.4f, 10.0f, nullptr}, e.data(), bs.data()));
      });
      benchmark::RegisterBenchmark(("exp_weights_ladder" + suffix).c_str(), [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> e(n);
        const float ladder[4] = {0.1f, 0.01f, 1e-4f, 1e-8f};
        for (auto _ : s)
          benchmark::DoNotOptimize(k->exp_weights(x.data(), n, {1.4f, 10.0f, ladder}, e.data(), nullptr));
      });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
