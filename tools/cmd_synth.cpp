// `nextok synth-logits`: writes the benchmark's realistic (or flat) logits row.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "npy.hpp"
#include "workloads.hpp"

namespace nextok::tools {
namespace {

struct SynthArgs {
  std::int64_t vocab = 151936;
  std::string out;
  bool flat = false;
  std::uint64_t seed = 1234;
};

}  // namespace

std::function<int()> add_synth(CLI::App& app) {
  auto a = std::make_shared<SynthArgs>();
  CLI::App* sub = app.add_subcommand(
      "synth-logits", "Write a realistic long-tailed logits row (.npy f32), as the benchmarks use");
  sub->add_option("--vocab", a->vocab, "Vocabulary size")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  sub->add_option("--out", a->out, "Output .npy path")->required();
  sub->add_flag("--flat", a->flat, "Flat worst case instead");
  sub->add_option("--seed", a->seed, "Generator seed")->capture_default_str();
  return [a, sub]() {
    if (!sub->parsed()) return -1;
    const auto l = a->flat ? flat_logits(a->vocab, a->seed) : realistic_logits(a->vocab, a->seed);
    write_npy_f32(a->out, l.data(), 1, a->vocab);
    std::fprintf(stderr, "wrote %s (%lld logits)\n", a->out.c_str(),
                 static_cast<long long>(a->vocab));
    return 0;
  };
}

}  // namespace nextok::tools
