// `nextok bench vocab`: time to a ready Vocabulary and Tokenizer, and encode
// throughput on one thread, side by side with HF `tokenizers` (through
// bench/vocab_anchor.py) on the same files and corpus in the same run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "nextok/error.hpp"
#include "nextok/tokenizer.hpp"
#include "text_corpus.hpp"
#include "timing.hpp"

#ifndef NEXTOK_SOURCE_DIR
#define NEXTOK_SOURCE_DIR "."
#endif

namespace nextok::tools {
namespace {

struct VocabBenchArgs {
  std::vector<std::string> tokenizers;
  bool json = false;
  bool quick = false;
  bool anchors = true;
  std::string python;
  std::string script = NEXTOK_SOURCE_DIR "/bench/vocab_anchor.py";
  std::size_t corpus_bytes = 1 << 20;
};

void emit(const VocabBenchArgs& a, const nlohmann::json& j) {
  std::printf("%s\n", a.json ? j.dump().c_str() : j.dump(1).c_str());
  std::fflush(stdout);
}

uint64_t checksum(const std::vector<uint32_t>& ids, uint64_t h) {
  for (uint32_t id : ids) h = (h ^ id) * 0x100000001b3ULL;
  return (h ^ 0xFFFF) * 0x100000001b3ULL;  // document separator
}

int run(VocabBenchArgs a) {
  if (a.python.empty()) a.python = default_python();
  const double budget = a.quick ? 0.3 : 3.0;
  const std::size_t loads = a.quick ? 3 : 15;
  const std::vector<std::string> docs =
      text_corpus(a.quick ? a.corpus_bytes / 8 : a.corpus_bytes, 7);
  std::size_t corpus_bytes = 0;
  for (const auto& d : docs) corpus_bytes += d.size();

  const auto tmp =
      std::filesystem::temp_directory_path() / ("nextok-bench-vocab-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  const std::string corpus_path = (tmp / "corpus.jsonl").string();
  {
    std::ofstream f(corpus_path, std::ios::binary);
    for (const auto& d : docs) f << nlohmann::json(d).dump() << '\n';
  }

  std::map<std::string, double> ours;  // "tokenizer|metric" → value
  for (const std::string& dir : a.tokenizers) {
    const std::string name = std::filesystem::path(dir).filename().string();
    const Timing vload = time_calls([&] { (void)load_vocabulary(dir); }, budget, loads, 1);
    const Timing tload = time_calls([&] { (void)Tokenizer::from_dir(dir); }, budget, loads, 1);
    const Tokenizer tok = Tokenizer::from_dir(dir);
    std::vector<uint32_t> ids;
    uint64_t sum = 0;
    std::size_t n_ids = 0;
    const Timing enc = time_calls(
        [&] {
          sum = 0xcbf29ce484222325ULL;
          n_ids = 0;
          for (const auto& d : docs) {
            ids.clear();
            tok.encode_into(d, ids);
            n_ids += ids.size();
            sum = checksum(ids, sum);
          }
        },
        budget, a.quick ? 3 : 20, 1);
    const double mbps = static_cast<double>(corpus_bytes) / enc.median_us;
    ours[name + "|vocab_ms"] = vload.median_us / 1e3;
    ours[name + "|tokenizer_ms"] = tload.median_us / 1e3;
    ours[name + "|encode_mb_s"] = mbps;
    emit(a, {{"bench", "vocab"},
             {"tokenizer", name},
             {"impl", "nextok"},
             {"phase", "vocab_load"},
             {"median_ms", vload.median_us / 1e3},
             {"iters", vload.iters}});
    emit(a, {{"bench", "vocab"},
             {"tokenizer", name},
             {"impl", "nextok"},
             {"phase", "tokenizer_load"},
             {"median_ms", tload.median_us / 1e3},
             {"iters", tload.iters}});
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum));
    emit(a, {{"bench", "vocab"},
             {"tokenizer", name},
             {"impl", "nextok"},
             {"phase", "encode"},
             {"median_ms", enc.median_us / 1e3},
             {"mb_per_s", mbps},
             {"bytes", corpus_bytes},
             {"docs", docs.size()},
             {"ids", n_ids},
             {"ids_checksum", hex}});
    ours[name + "|checksum"] = static_cast<double>(sum >> 11);

    if (!a.anchors) continue;
    const std::string cmd = "RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \"" + a.python +
                            "\" \"" + a.script + "\" \"" + dir + "\" \"" + corpus_path + "\" " +
                            std::to_string(loads) + " " + (a.quick ? "3" : "10");
    std::FILE* p = ::popen(cmd.c_str(), "r");
    char line[4096];
    bool any = false;
    while (p != nullptr && std::fgets(line, sizeof line, p) != nullptr) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      any = true;
      j["tokenizer"] = name;
      const std::string phase = j.value("phase", "");
      if (phase == "encode") {
        j["ids_equal"] = j.value("ids_checksum", "") == std::string(hex);
        emit(a, j);
        emit(a, {{"bench", "vocab_ratio"},
                 {"tokenizer", name},
                 {"baseline", "hf-tokenizers"},
                 {"metric", "encode_throughput"},
                 {"speedup", mbps / j["mb_per_s"].get<double>()}});
      } else {
        emit(a, j);
        const std::string key = phase == "tokenizer_load" ? "|tokenizer_ms" : "";
        if (!key.empty()) {
          emit(a, {{"bench", "vocab_ratio"},
                   {"tokenizer", name},
                   {"baseline", "hf-tokenizers"},
                   {"metric", "load"},
                   {"speedup", j["median_ms"].get<double>() / ours[name + key]}});
        }
      }
    }
    const int rc = p != nullptr ? ::pclose(p) : -1;
    if (rc != 0 || !any) {
      emit(a, {{"bench", "vocab"},
               {"warning",
                "anchor failed: set NEXTOK_PYTHON to a venv with "
                "the tokenizers package"},
               {"command", cmd}});
    }
  }
  std::filesystem::remove_all(tmp);
  return 0;
}

}  // namespace

std::function<int()> add_bench_vocab(CLI::App& bench) {
  auto a = std::make_shared<VocabBenchArgs>();
  CLI::App* sub = bench.add_subcommand("vocab", "Tokenizer load and encode vs HF tokenizers");
  sub->add_option("--tokenizer", a->tokenizers, "Directories with tokenizer.json")->required();
  sub->add_flag("--json", a->json, "JSON lines");
  sub->add_flag("--quick", a->quick, "Few iterations (smoke run)");
  sub->add_flag("!--no-anchors", a->anchors, "Skip HF tokenizers");
  sub->add_option("--python", a->python, "Python with the tokenizers package");
  sub->add_option("--anchor-script", a->script, "Path to bench/vocab_anchor.py");
  sub->add_option("--corpus-bytes", a->corpus_bytes, "Size of the generated corpus");
  return [a, sub]() { return sub->parsed() ? run(*a) : -1; };
}

}  // namespace nextok::tools
