// `nextok sample`: N tokens drawn in sequence from one seeded PCG32 stream.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "nextok/nextok.hpp"
#include "sampling_flags.hpp"

namespace nextok::tools {
namespace {

struct SampleArgs {
  LogitsFlags logits;
  SamplingFlags sampling;
  std::int64_t n = 1;
  bool json = false;
};

int run_sample(const SampleArgs& a) {
  const PreparedStep step = prepare_step(a.logits, a.sampling);
  const LoadedLogits& l = step.logits;
  const SamplerConfig& cfg = step.sampler;
  const PenaltyConfig& pen = step.penalties;
  const std::vector<std::int32_t>& history = step.history;
  const StepInput in{l.view, {}, history};
  Workspace ws;
  Pcg32 rng = Pcg32::for_seed(cfg.seed_or_default());
  if (a.json) std::printf("{\"tokens\":[");
  for (std::int64_t i = 0; i < a.n; ++i) {
    const std::int32_t t = sample_token(in, cfg, pen, rng, ws);
    if (a.json) {
      std::printf(i == 0 ? "%d" : ",%d", t);
    } else {
      std::printf("%d\n", t);
    }
  }
  if (a.json) std::printf("]}\n");
  return 0;
}

}  // namespace

std::function<int()> add_sample(CLI::App& app) {
  auto a = std::make_shared<SampleArgs>();
  CLI::App* sub = app.add_subcommand("sample", "Draw token ids from a logits row");
  a->logits.add_to(*sub);
  a->sampling.add_to(*sub);
  sub->add_option("--n", a->n, "How many tokens to draw")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  sub->add_flag("--json", a->json, "Print {\"tokens\": [...]}");
  return [a, sub]() { return sub->parsed() ? run_sample(*a) : -1; };
}

}  // namespace nextok::tools
