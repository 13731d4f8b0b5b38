// `nextok bench decode`: prefill and decode speed of the built-in runtime on a GGUF
// model, side by side with llama.cpp (llama-cpp-python) on the same file,
// prompt tokens, token count and threads. JSON lines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "default_model.hpp"
#include "generate_session.hpp"
#include "nextok/error.hpp"

namespace nextok::tools {
namespace {

struct BenchDecodeArgs {
  GenerateArgs gen;
  unsigned repeats = 3;
  bool anchor = true;
  std::string python;
  std::string script = NEXTOK_SOURCE_DIR "/bench/decode_anchor.py";
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string join(const std::vector<std::int32_t>& ids) {
  std::string s;
  for (auto id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

int run_bench_decode(BenchDecodeArgs& a) {
  if (a.gen.prompt.empty() && a.gen.chat.empty() && a.gen.prompt_ids.empty()) {
    a.gen.prompt = "Write a short story about a robot who learns to paint.";
  }
  GenerateSession s(a.gen);
  // EOS is ignored so both sides produce exactly max_tokens tokens.
  s.options().eos_ids = {~0u};
  std::vector<double> tps, prefill, sampler, constraint;
  GenerateResult last;
  for (unsigned i = 0; i < std::max(1u, a.repeats); ++i) {
    s.reset();
    last = s.run();
    const auto j = s.stats_json(last);
    tps.push_back(j["decode_tokens_per_s"].get<double>());
    prefill.push_back(j["prefill_tokens_per_s"].get<double>());
    sampler.push_back(j["sampler_share"].get<double>());
    constraint.push_back(j["constraint_share"].get<double>());
  }
  const std::string model_path = resolve_model(a.gen.model).string();
  nlohmann::json line = {{"bench", "decode"},
                         {"impl", "nextok"},
                         {"model", std::filesystem::path(model_path).filename().string()},
                         {"prompt_tokens", s.prompt().size()},
                         {"tokens", last.tokens.size()},
                         {"threads", s.model().threads()},
                         {"constrained", a.gen.json_object || !a.gen.json_schema.empty()},
                         {"tokens_per_s", median(tps)},
                         {"prefill_tokens_per_s", median(prefill)},
                         {"sampler_share", median(sampler)},
                         {"constraint_share", median(constraint)}};
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
  if (!a.anchor) return 0;
  if (a.python.empty()) a.python = default_python();
  const std::string cmd =
      a.python + " " + a.script + " --model '" + model_path + "' --prompt-ids " + join(s.prompt()) +
      " --tokens " + std::to_string(a.gen.max_tokens) + " --threads " +
      std::to_string(a.gen.threads) + " --repeats " + std::to_string(a.repeats) +
      " --nextok-tokens-per-s " + std::to_string(median(tps)) + " --nextok-prefill-tokens-per-s " +
      std::to_string(median(prefill));
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::fprintf(stderr,
                 "nextok: the llama.cpp anchor failed (%s); is llama-cpp-python installed?\n",
                 cmd.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

std::function<int()> add_bench_decode(CLI::App& bench) {
  auto a = std::make_shared<BenchDecodeArgs>();
  a->gen.max_tokens = 128;
  CLI::App* cmd =
      bench.add_subcommand("decode", "Prefill and decode tokens/s vs llama.cpp on a GGUF model");
  a->gen.add_to(*cmd);
  cmd->add_option("--repeats", a->repeats, "Runs per side (median)");
  cmd->add_flag("!--no-anchor", a->anchor, "Skip llama.cpp");
  cmd->add_option("--python", a->python, "Python with llama-cpp-python");
  cmd->add_option("--anchor-script", a->script, "Path to bench/decode_anchor.py");
  return [a, cmd]() { return cmd->parsed() ? run_bench_decode(*a) : -1; };
}

}  // namespace nextok::tools
