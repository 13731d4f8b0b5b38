// Google Benchmark micro-benchmarks of the CPU kernels, per ISA. Runs five
// repetitions and reports medians unless told otherwise; after the run, one
// JSON line per kernel and vocabulary on stderr gives the AVX-512 speedup over
// AVX2 (median times), so --benchmark_format=json keeps stdout one document.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/bf16.hpp"
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

std::vector<std::uint16_t> logits_bf16(std::size_t n) {
  const auto x = logits(n);
  std::vector<std::uint16_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = cpu::f32_to_bf16(x[i]);
  return b;
}

std::vector<std::uint32_t> half_mask(std::size_t n) {
  std::mt19937_64 g(2);
  std::vector<std::uint32_t> m((n + 31) / 32);
  for (auto& w : m) w = static_cast<std::uint32_t>(g());
  return m;
}

template <typename F>
void add(const std::string& name, const cpu::Kernels* k, std::size_t n, F body) {
  const std::string full = name + "/" + k->name + "/" + std::to_string(n);
  benchmark::RegisterBenchmark(full.c_str(), [body](benchmark::State& s) { body(s); });
}

void register_all() {
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    for (std::size_t n : {32000u, 151936u, 262144u}) {
      add("argmax_f32", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->argmax_f32(x.data(), n, nullptr));
      });
      add("argmax_bf16", k, n, [k, n](benchmark::State& s) {
        const auto x = logits_bf16(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->argmax_bf16(x.data(), n, nullptr));
      });
      add("argmax_f32_mask", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        const auto m = half_mask(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->argmax_f32(x.data(), n, m.data()));
      });
      add("load_f32", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> d(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->load_f32(x.data(), n, nullptr, d.data()));
      });
      add("load_bf16_mask", k, n, [k, n](benchmark::State& s) {
        const auto x = logits_bf16(n);
        const auto m = half_mask(n);
        std::vector<float> d(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->load_bf16(x.data(), n, m.data(), d.data()));
      });
      add("max_f32", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->max_f32(x.data(), n));
      });
      add("exp_weights", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> e(n);
        std::vector<double> bs(n / cpu::kSumBlock + 1);
        for (auto _ : s)
          benchmark::DoNotOptimize(k->exp_weights(x.data(), n, {1.4f, 10.0f, nullptr}, e.data(), bs.data()));
      });
      add("exp_weights_ladder", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> e(n);
        const float ladder[4] = {0.1f, 0.01f, 1e-4f, 1e-8f};
        for (auto _ : s)
          benchmark::DoNotOptimize(k->exp_weights(x.data(), n, {1.4f, 10.0f, ladder}, e.data(), nullptr));
      });
      add("indices_ge", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<std::int32_t> out(n);
        for (auto _ : s) benchmark::DoNotOptimize(k->indices_ge(x.data(), n, 6.0f, out.data()));
      });
      // The dense top-p cut's pass: a band of ~7% of a flat row's weights.
      add("band_split", k, n, [k, n](benchmark::State& s) {
        const auto x = logits(n);
        std::vector<float> e(n);
        for (std::size_t i = 0; i < n; ++i) e[i] = 0.95f + 0.002f * x[i];
        std::vector<std::int32_t> out(n);
        std::vector<double> bs(n / cpu::kSumBlock + 1);
        double above = 0.0;
        for (auto _ : s)
          benchmark::DoNotOptimize(
              k->band_split(e.data(), n, 0.9495f, 0.9505f, &above, bs.data(), out.data()));
      });
    }
  }
}

// Collects the median (or single-run) time of each "kernel/isa/n" row.
template <typename Base>
class RatioReporter : public Base {
 public:
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    for (const auto& r : runs) {
      const std::string name = r.run_name.function_name;
      const bool median = r.aggregate_name == "median";
      if (median || (r.aggregate_name.empty() && !medians_.count(name)))
        medians_[name] = r.GetAdjustedRealTime();
    }
    Base::ReportRuns(runs);
  }
  void Finalize() override {
    Base::Finalize();
    for (const auto& [name, t512] : medians_) {
      const auto a = name.find("/avx512/");
      if (a == std::string::npos) continue;
      const std::string kernel = name.substr(0, a), n = name.substr(a + 8);
      const auto it = medians_.find(kernel + "/avx2/" + n);
      if (it == medians_.end()) continue;
      std::fprintf(stderr,
                   "{\"bench\":\"micro_isa_ratio\",\"kernel\":\"%s\",\"vocab\":%s,"
                   "\"avx2\":%.3f,\"avx512\":%.3f,\"unit\":\"%s\",\"avx512_speedup\":%.3f}\n",
                   kernel.c_str(), n.c_str(), it->second, t512,
                   benchmark::GetTimeUnitString(benchmark::kNanosecond), it->second / t512);
    }
  }

 private:
  std::map<std::string, double> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  register_all();
  // Defaults first, so flags given on the command line override them.
  std::vector<char*> args{argv[0]};
  std::string reps = "--benchmark_repetitions=5", agg = "--benchmark_report_aggregates_only=true";
  args.push_back(reps.data());
  args.push_back(agg.data());
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    args.push_back(argv[i]);
    json = json || std::string(argv[i]) == "--benchmark_format=json";
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (json) {
    RatioReporter<benchmark::JSONReporter> r;
    benchmark::RunSpecifiedBenchmarks(&r);
  } else {
    RatioReporter<benchmark::ConsoleReporter> r;
    benchmark::RunSpecifiedBenchmarks(&r);
  }
  return 0;
}
