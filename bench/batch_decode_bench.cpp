// Continuous batching on the built-in Llama runtime: one-token steps for B
// sequences at once (LlamaModel::step_batch) against B = 1, and a prompt
// step. Prints one JSON object per line. Usage: nextok_batch_bench MODEL.gguf [steps]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "nextok/llama.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gguf [steps]\n", argv[0]);
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 32;
  auto model = nextok::LlamaModel::load(argv[1]);
  std::vector<std::int32_t> prompt(32);
  for (std::size_t i = 0; i < prompt.size(); ++i)
    prompt[i] = static_cast<std::int32_t>(100 + 7 * i);
  using clock = std::chrono::steady_clock;
  double base = 0.0;
  for (int b : {1, 2, 4, 8, 16}) {
    std::vector<double> times;
    for (int rep = 0; rep < 3; ++rep) {
      std::vector<std::size_t> ids;
      for (int i = 0; i < b; ++i) {
        ids.push_back(model->add_sequence());
        model->step(ids.back(), prompt);
      }
      const std::vector<std::int32_t> tokens(static_cast<std::size_t>(b), 42);
      const auto t0 = clock::now();
      for (int s = 0; s < steps; ++s) model->step_batch(ids, tokens);
      times.push_back(std::chrono::duration<double>(clock::now() - t0).count() / steps);
      for (std::size_t id : ids) model->remove_sequence(id);
    }
    std::sort(times.begin(), times.end());
    const double tps = b / times[1];
    if (b == 1) base = tps;
    std::printf(
        "{\"bench\":\"batch_decode\",\"impl\":\"nextok\",\"B\":%d,\"step_median_ms\":%.2f,"
        "\"tokens_per_s\":%.1f,\"ratio_vs_B1\":%.2f}\n",
        b, times[1] * 1e3, tps, tps / base);
  }
  std::vector<double> times;
  for (int rep = 0; rep < 3; ++rep) {
    model->truncate(0);
    const auto t0 = clock::now();
    model->enqueue(prompt);
    times.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  std::printf(
      "{\"bench\":\"prefill\",\"impl\":\"nextok\",\"tokens\":%zu,\"median_ms\":%.1f,"
      "\"tokens_per_s\":%.1f}\n",
      prompt.size(), times[1] * 1e3, static_cast<double>(prompt.size()) / times[1]);
  return 0;
}
