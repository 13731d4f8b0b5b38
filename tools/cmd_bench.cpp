// `nextok bench host`: the host pipeline against a full-sort implementation
// of the same semantics and, through bench/host_anchors.py, llama.cpp's
// sampler chain and mlx-lm's sampler, on the same logits in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/cpu/bf16.hpp"
#include "backend/cpu/kernels.hpp"
#include "commands.hpp"
#include "nextok/nextok.hpp"
#include "npy.hpp"
#include "reference/full_sort.hpp"
#include "timing.hpp"
#include "workloads.hpp"

#ifndef NEXTOK_SOURCE_DIR
#define NEXTOK_SOURCE_DIR "."
#endif

namespace nextok::tools {
namespace {

struct BenchArgs {
  bool json = false;
  bool quick = false;
  bool anchors = true;
  bool kernels = true;
  std::string python;
  std::string script = NEXTOK_SOURCE_DIR "/bench/host_anchors.py";
  std::vector<std::int64_t> vocabs = {32000, 151936, 262144};
};

using Key = std::string;  // config|vocab|dtype
Key key_of(const std::string& c, std::int64_t v, const std::string& d) {
  return c + "|" + std::to_string(v) + "|" + d;
}

void emit(const BenchArgs& a, const nlohmann::json& j) {
  if (a.json) {
    std::printf("%s\n", j.dump().c_str());
  } else if (j.contains("kernel") && j.contains("median_us")) {
    std::printf("kernel %-18s V=%-7lld %-7s median %9.1f us  p99 %9.1f us\n",
                j["kernel"].get<std::string>().c_str(), j["vocab"].get<long long>(),
                j["isa"].get<std::string>().c_str(), j["median_us"].get<double>(),
                j["p99_us"].get<double>());
  } else if (j.contains("median_us")) {
    std::printf("%-11s V=%-7lld %-5s %-10s median %9.1f us  p99 %9.1f us\n",
                j["config"].get<std::string>().c_str(), j["vocab"].get<long long>(),
                j["dtype"].get<std::string>().c_str(), j["impl"].get<std::string>().c_str(),
                j["median_us"].get<double>(), j["p99_us"].get<double>());
  } else {
    std::printf("%s\n", j.dump().c_str());
  }
  std::fflush(stdout);
}

// The host kernels on realistic logits, once per ISA this CPU runs, then the
// speedup of each ISA over AVX2 (or over scalar where AVX2 is missing).
void bench_kernels(const BenchArgs& a, double budget, std::size_t max_iters) {
  const float ladder[cpu::kLadderLevels] = {0.0183f, 3.35e-4f, 1.13e-7f, 1.27e-14f};
  for (std::int64_t vocab : a.vocabs) {
    const auto n = static_cast<std::size_t>(vocab);
    const std::vector<float> x = realistic_logits(vocab, 1234);
    std::vector<std::uint16_t> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = cpu::f32_to_bf16(x[i]);
    std::vector<std::uint32_t> mask((n + 31) / 32, 0x5555'5555U);
    std::vector<float> dst(n);
    std::vector<double> sums(n / cpu::kSumBlock + 1);
    float mx = x[0];
    for (float v : x) mx = v > mx ? v : mx;
    const cpu::ExpParams p{1.0f / 0.8f, mx / 0.8f, ladder};
    std::map<std::string, std::map<std::string, double>> by_kernel;  // kernel -> isa -> us
    for (const cpu::Kernels* k : cpu::available_kernels()) {
      const std::vector<std::pair<std::string, std::function<void()>>> runs = {
          {"exp_weights_ladder",
           [&] { (void)k->exp_weights(x.data(), n, p, dst.data(), sums.data()); }},
          {"argmax_f32", [&] { (void)k->argmax_f32(x.data(), n, nullptr); }},
          {"argmax_bf16", [&] { (void)k->argmax_bf16(b.data(), n, nullptr); }},
          {"argmax_f32_mask", [&] { (void)k->argmax_f32(x.data(), n, mask.data()); }},
          {"load_f32_mask", [&] { (void)k->load_f32(x.data(), n, mask.data(), dst.data()); }},
          {"load_bf16_mask", [&] { (void)k->load_bf16(b.data(), n, mask.data(), dst.data()); }},
      };
      for (const auto& [name, f] : runs) {
        const Timing t = time_calls(f, budget, max_iters);
        by_kernel[name][k->name] = t.median_us;
        emit(a, {{"bench", "host_kernel"},
                 {"kernel", name},
                 {"vocab", vocab},
                 {"isa", k->name},
                 {"median_us", t.median_us},
                 {"p99_us", t.p99_us},
                 {"iters", t.iters}});
      }
    }
    for (const auto& [name, isas] : by_kernel) {
      const std::string base = isas.count("avx2") != 0 ? "avx2" : "scalar";
      for (const auto& [isa, us] : isas) {
        if (isa == base || isa == "scalar") continue;
        emit(a, {{"bench", "host_kernel_ratio"},
                 {"kernel", name},
                 {"vocab", vocab},
                 {"isa", isa},
                 {"baseline", base},
                 {"speedup", isas.at(base) / us}});
      }
    }
  }
}

int run_bench_host(BenchArgs a) {
  if (a.python.empty()) a.python = default_python();
  const double budget = a.quick ? 0.05 : 0.4;
  const std::size_t max_iters = a.quick ? 50 : 2000;
  std::map<Key, double> medians;  // impl-prefixed keys
  if (a.kernels) bench_kernels(a, a.quick ? 0.05 : 0.3, max_iters);
  const auto tmp =
      std::filesystem::temp_directory_path() / ("nextok-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  nlohmann::json cases = nlohmann::json::array();

  for (std::int64_t vocab : a.vocabs) {
    const std::vector<float> real = realistic_logits(vocab, 1234);
    const std::vector<float> flat = flat_logits(vocab, 4321);
    const std::string real_path = (tmp / ("real_" + std::to_string(vocab) + ".npy")).string();
    const std::string flat_path = (tmp / ("flat_" + std::to_string(vocab) + ".npy")).string();
    write_npy_f32(real_path, real.data(), 1, vocab);
    write_npy_f32(flat_path, flat.data(), 1, vocab);
    for (const std::string dtype : {"f32", "bf16"}) {
      for (const BenchConfig& c : host_bench_configs(vocab, 99)) {
        const std::vector<float>& src = c.flat ? flat : real;
        std::vector<std::uint16_t> b16;
        LogitsView view = LogitsView::f32(src);
        if (dtype == "bf16") {
          b16.resize(src.size());
          for (std::size_t i = 0; i < src.size(); ++i) b16[i] = cpu::f32_to_bf16(src[i]);
          view = LogitsView::bf16(b16);
        }
        const StepInput in{view, {}, c.history};
        Workspace ws;
        Pcg32 rng = Pcg32::for_seed(7);
        const bool greedy = c.name == "greedy";
        auto fast = [&] {
          volatile std::int32_t t =
              greedy ? argmax(view) : sample_token(in, c.sampler, c.penalties, rng, ws);
          (void)t;
        };
        auto slow = [&] {
          volatile std::int32_t t =
              reference::full_sort_sample(in, c.sampler, c.penalties, rng, ws);
          (void)t;
        };
        for (const auto& [impl, timing] :
             {std::pair<std::string, Timing>{"nextok", time_calls(fast, budget, max_iters)},
              std::pair<std::string, Timing>{"full-sort",
                                             time_calls(slow, budget, a.quick ? 5 : 40)}}) {
          medians[impl + "|" + key_of(c.name, vocab, dtype)] = timing.median_us;
          emit(a, {{"bench", "host"},
                   {"config", c.name},
                   {"vocab", vocab},
                   {"dtype", dtype},
                   {"impl", impl},
                   {"median_us", timing.median_us},
                   {"p99_us", timing.p99_us},
                   {"iters", timing.iters}});
        }
        nlohmann::json bias = nlohmann::json::array();
        for (const auto& [id, b] : c.penalties.logit_bias) bias.push_back({id, b});
        cases.push_back({{"config", c.name},
                         {"vocab", vocab},
                         {"dtype", dtype},
                         {"logits", c.flat ? flat_path : real_path},
                         {"temperature", c.sampler.temperature},
                         {"top_p", c.sampler.top_p},
                         {"top_k", c.sampler.top_k},
                         {"min_p", c.sampler.min_p},
                         {"repetition_penalty", c.penalties.repetition_penalty},
                         {"presence_penalty", c.penalties.presence_penalty},
                         {"frequency_penalty", c.penalties.frequency_penalty},
                         {"logit_bias", bias},
                         {"history", c.history},
                         {"quick", a.quick}});
      }
    }
  }

  if (a.anchors) {
    const std::string cases_path = (tmp / "cases.json").string();
    {
      std::FILE* f = std::fopen(cases_path.c_str(), "w");
      if (f == nullptr) throw Error(ErrorCode::kIo, "tmp", "cannot write " + cases_path);
      std::fputs(cases.dump().c_str(), f);
      std::fclose(f);
    }
    const std::string cmd =
        "OMP_NUM_THREADS=1 \"" + a.python + "\" \"" + a.script + "\" \"" + cases_path + "\"";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    char line[4096];
    while (p != nullptr && std::fgets(line, sizeof line, p) != nullptr) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("median_us")) {
        medians[j["impl"].get<std::string>() + "|" +
                key_of(j["config"], j["vocab"].get<std::int64_t>(), j["dtype"])] =
            j["median_us"].get<double>();
      }
      emit(a, j);
    }
    const int rc = p != nullptr ? ::pclose(p) : -1;
    if (rc != 0)
      emit(a, {{"bench", "host"},
               {"warning",
                "anchor script failed; run with NEXTOK_PYTHON "
                "pointing at a venv with mlx-lm and "
                "llama-cpp-python"},
               {"command", cmd}});
  }
  for (const auto& [k, v] : medians) {
    if (k.rfind("nextok|", 0) != 0) continue;
    const std::string rest = k.substr(7);
    for (const std::string other : {"full-sort", "llama.cpp", "mlx-lm"}) {
      const auto it = medians.find(other + "|" + rest);
      if (it == medians.end()) continue;
      const auto c1 = rest.find('|'), c2 = rest.rfind('|');
      emit(a, {{"bench", "host_ratio"},
               {"config", rest.substr(0, c1)},
               {"vocab", std::stoll(rest.substr(c1 + 1, c2 - c1 - 1))},
               {"dtype", rest.substr(c2 + 1)},
               {"baseline", other},
               {"speedup", it->second / v}});
    }
  }
  std::filesystem::remove_all(tmp);
  return 0;
}

}  // namespace

std::string default_python() {
  if (const char* p = std::getenv("NEXTOK_PYTHON")) return p;
  const std::string venv = NEXTOK_SOURCE_DIR "/.venv/bin/python";
  return std::filesystem::exists(venv) ? venv : "python3";
}

std::function<int()> add_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print JSON lines");
  bench->require_subcommand(1);
  CLI::App* host = bench->add_subcommand("host", "Host sampling pipeline vs anchors");
  host->add_flag("--json", a->json, "JSON lines");
  host->add_flag("--quick", a->quick, "Few iterations (smoke run)");
  host->add_flag("!--no-anchors", a->anchors, "Skip llama.cpp and mlx-lm");
  host->add_flag("!--no-kernels", a->kernels, "Skip the per-ISA kernel rows");
  host->add_option("--python", a->python, "Python with mlx-lm and llama-cpp-python");
  host->add_option("--anchor-script", a->script, "Path to bench/host_anchors.py");
  host->add_option("--vocab", a->vocabs, "Vocabulary sizes");
  auto vocab = add_bench_vocab(*bench);
  auto decode = add_bench_decode(*bench);
  auto batch = add_bench_batch(*bench);
  return [a, host, vocab, decode, batch]() {
    if (host->parsed()) return run_bench_host(*a);
    for (const auto& sub : {vocab, decode, batch}) {
      if (const int rc = sub(); rc >= 0) return rc;
    }
    return -1;
  };
}

}  // namespace nextok::tools
