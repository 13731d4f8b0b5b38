// `nextok bench batch`: the batched host path (sample_batch on a RowPool)
// against the same rows stepped one after another on one thread, at
// B = 1 / 8 / 32 rows of realistic logits, greedy and `full` sampling. JSON
// lines: medians per batch, per row, and the speedup.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nextok/batch_sampler.hpp"
#include "timing.hpp"
#include "workloads.hpp"

namespace nextok::tools {
namespace {

struct BenchBatchArgs {
  std::vector<std::size_t> batches = {1, 8, 32};
  std::int64_t vocab = 151936;
  unsigned threads = 0;
  bool quick = false;
};

int run_bench_batch(const BenchBatchArgs& a) {
  RowPool pool(a.threads);
  const double budget = a.quick ? 0.05 : 0.5;
  const std::size_t max_iters = a.quick ? 20 : 500;
  for (const char* config : {"greedy", "full"}) {
    SamplerConfig sc;
    if (std::string(config) == "full") {
      sc.temperature = 0.8f;
      sc.top_p = 0.95f;
      sc.top_k = 40;
      sc.min_p = 0.05f;
    }
    for (std::size_t rows : a.batches) {
      std::vector<float> logits;
      for (std::size_t b = 0; b < rows; ++b) {
        const auto row = realistic_logits(a.vocab, 77 + b);
        logits.insert(logits.end(), row.begin(), row.end());
      }
      const LogitsView all{logits.data(), DType::kF32, static_cast<std::int64_t>(rows), a.vocab,
                           Device::kCPU};
      std::vector<std::unique_ptr<Sampler>> owned;
      std::vector<Sampler*> samplers;
      for (std::size_t b = 0; b < rows; ++b) {
        SamplerConfig c = sc;
        c.seed = b;
        owned.push_back(std::make_unique<Sampler>(c, PenaltyConfig{}));
        samplers.push_back(owned.back().get());
      }
      const Timing serial = time_calls(
          [&] {
            for (std::size_t b = 0; b < rows; ++b)
              (void)samplers[b]->next(all.row(static_cast<std::int64_t>(b)));
          },
          budget, max_iters);
      const Timing pooled =
          time_calls([&] { (void)sample_batch(pool, all, samplers); }, budget, max_iters);
      for (const auto& [impl, t] :
           {std::pair{"row_by_row", serial}, std::pair{"sample_batch", pooled}}) {
        const nlohmann::json j = {
            {"bench", "batch"},
            {"config", config},
            {"impl", impl},
            {"rows", rows},
            {"vocab", a.vocab},
            {"threads", impl == std::string("sample_batch") ? pool.size() : 1u},
            {"median_us", t.median_us},
            {"per_row_us", t.median_us / static_cast<double>(rows)},
            {"p99_us", t.p99_us},
            {"iters", t.iters}};
        std::printf("%s\n", j.dump().c_str());
      }
      const nlohmann::json ratio = {{"bench", "batch_ratio"},
                                    {"config", config},
                                    {"rows", rows},
                                    {"threads", pool.size()},
                                    {"speedup", serial.median_us / pooled.median_us}};
      std::printf("%s\n", ratio.dump().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

std::function<int()> add_bench_batch(CLI::App& bench) {
  auto a = std::make_shared<BenchBatchArgs>();
  CLI::App* cmd =
      bench.add_subcommand("batch", "Batched host sampling (RowPool) vs row by row, B = 1/8/32");
  cmd->add_option("--rows", a->batches, "Batch sizes");
  cmd->add_option("--vocab", a->vocab, "Vocabulary size");
  cmd->add_option("--threads", a->threads, "Pool threads (0 = every hardware thread)");
  cmd->add_flag("--quick", a->quick, "Few iterations (smoke run)");
  return [a, cmd]() { return cmd->parsed() ? run_bench_batch(*a) : -1; };
}

}  // namespace nextok::tools
