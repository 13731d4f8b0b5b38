// `nextok maskbench`: MaskBench's measurement on schema files. Each schema
// is compiled (TTFM = compile + first mask); each test instance is
// serialized, tokenized and walked token by token, timing every mask (TBM):
// valid instances must be accepted to the end with EOS allowed, invalid ones
// refused somewhere. One JSON line per schema, then a summary line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"

#ifndef NEXTOK_SOURCE_DIR
#define NEXTOK_SOURCE_DIR "."
#endif

namespace nextok::tools {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct MaskbenchArgs {
  std::string tokenizer;
  std::vector<std::string> paths;
  bool json_lines = false;
  bool lenient = false;
  uint32_t max_compile_ms = 0;  // 0: the default budget
  bool compact = false;
  bool quiet = false;
  size_t limit = 0;
  size_t min_passing = 0;
  std::vector<std::string> anchors;  // llguidance, xgrammar, outlines-core
  std::string python;
  std::string script = NEXTOK_SOURCE_DIR "/bench/maskbench_anchor.py";
};

// The anchor engines on the same files and tokenizer, through
// bench/maskbench_anchor.py; their summary lines are printed after ours.
void run_anchors(const MaskbenchArgs& a) {
  const std::string python = a.python.empty() ? default_python() : a.python;
  std::string json_path = a.tokenizer;
  if (std::filesystem::is_directory(json_path)) json_path += "/tokenizer.json";
  for (const std::string& impl : a.anchors) {
    std::string cmd = "RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \"" +
                      python + "\" \"" + a.script + "\" --json --impl \"" + impl +
                      "\" --tokenizer \"" + json_path + "\"";
    if (a.limit) cmd += " --limit " + std::to_string(a.limit);
    for (const auto& p : a.paths) cmd += " \"" + p + "\"";
    std::FILE* pipe = ::popen(cmd.c_str(), "r");
    std::string last;
    char buf[1 << 16];
    while (pipe != nullptr && std::fgets(buf, sizeof buf, pipe) != nullptr) last = buf;
    if (pipe != nullptr) ::pclose(pipe);
    const json j = json::parse(last, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      std::printf("%s\n",
                  json{{"warning", "anchor " + impl + " produced no summary"}}.dump().c_str());
    } else {
      std::printf("%s\n", a.json_lines ? j.dump().c_str() : j.dump(1).c_str());
    }
  }
}

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// json.dumps(data, ensure_ascii=False): ", " and ": " separators.
void serialize(const json& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += json(k).dump();
      out += ": ";
      serialize(x, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      serialize(v[i], out);
    }
    out += ']';
  } else {
    out += v.dump();
  }
}

// At most n bytes of s, cut at a code point boundary (the JSON line must
// stay valid UTF-8).
// A token may end inside a character, so the text read so far is not always
// UTF-8: print such bytes as U+FFFD rather than fail the run.
std::string dump_line(const json& line) {
  return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string utf8_prefix(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<uint8_t>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

struct Schema {
  std::string file;
  size_t index;
  json schema;
  json tests;
};

void collect(const std::filesystem::path& p, std::vector<std::filesystem::path>& out) {
  if (std::filesystem::is_directory(p)) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  } else {
    out.push_back(p);
  }
}

// MaskBench files hold one {schema, tests}; JSON-Schema-Test-Suite files an
// array of {description, schema, tests}.
std::vector<Schema> load(const std::filesystem::path& p) {
  const json doc = json::parse(read_file(p.string()));
  std::vector<Schema> out;
  if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i)
      out.push_back({p.string(), i, doc[i].at("schema"), doc[i].at("tests")});
  } else {
    out.push_back({p.string(), 0, doc.at("schema"), doc.at("tests")});
  }
  return out;
}

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

int run(const MaskbenchArgs& a) {
  const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
  const auto index = TokenIndex::build(tok.shared_vocab());
  const Vocabulary& vocab = tok.vocab();
  JsonConstraintOptions opt;
  opt.strict = !a.lenient;
  if (a.max_compile_ms) opt.limits.max_compile_ms = a.max_compile_ms;
  if (a.compact) opt.max_whitespace = 0;
  std::vector<std::filesystem::path> files;
  for (const auto& p : a.paths) collect(p, files);

  std::vector<uint32_t> mask(bitmask_words(vocab.size()));
  std::vector<double> tbm, ttfm, compile_mib;
  size_t schemas = 0, passing = 0, compile_error = 0, valid_rejected = 0, invalid_accepted = 0;
  // Tokens the mask allowed that the matcher then refused: an engine bug
  // either way, reported per schema and failing the run.
  size_t mask_mismatch = 0;
  std::map<std::string, size_t> errors;
  EncodeOptions eo;
  eo.parse_special = false;
  for (const auto& file : files) {
    for (const Schema& s : load(file)) {
      if (a.limit && schemas >= a.limit) break;
      ++schemas;
      json line = {{"file", s.file}, {"index", s.index}};
      std::shared_ptr<const JsonGrammar> grammar;
      const auto t0 = Clock::now();
      try {
        grammar = JsonGrammar::from_schema(index, s.schema.dump(), opt);
        JsonConstraint first(grammar);
        first.step_mask(mask);
      } catch (const Error& e) {
        ++compile_error;
        line["compiled"] = false;
        line["error"] = e.what();
        std::string kind = e.what();
        if (auto q = kind.find(": "); q != std::string::npos) kind = kind.substr(q + 2);
        if (kind.size() > 60) kind.resize(60);
        ++errors[kind];
        if (!a.quiet) std::printf("%s\n", dump_line(line).c_str());
        continue;
      }
      const double compile_us = us_since(t0);
      ttfm.push_back(compile_us);
      line["compiled"] = true;
      line["ttfm_us"] = compile_us;
      compile_mib.push_back(static_cast<double>(grammar->compile_bytes()) / (1 << 20));
      line["compile_mib"] = compile_mib.back();
      size_t vr = 0, ia = 0, mm = 0;
      const size_t first_mask = tbm.size();
      json failures = json::array();
      // Where the schema's slowest mask was computed: the state a tail
      // figure comes from.
      double slowest = -1;
      json slowest_at;
      for (size_t ti = 0; ti < s.tests.size(); ++ti) {
        const json& t = s.tests[ti];
        // `text`: the exact spelling to walk (generated oracles vary
        // whitespace and key order); else `data` as json.dumps writes it.
        std::string text;
        if (auto it = t.find("text"); it != t.end() && it->is_string())
          text = it->get<std::string>();
        else
          serialize(t.at("data"), text);
        const bool valid = t.at("valid").get<bool>();
        const std::vector<uint32_t> ids = tok.encode(text, eo);
        JsonConstraint c(grammar);
        bool ok = true;
        size_t at = 0;
        for (; at <= ids.size(); ++at) {
          const auto m0 = Clock::now();
          c.step_mask(mask);
          tbm.push_back(us_since(m0));
          if (tbm.back() > slowest) {
            slowest = tbm.back();
            std::string before;
            for (size_t k = 0; k < at; ++k) before += vocab.bytes(ids[k]);
            slowest_at = {{"test", ti}, {"token", at}, {"after", utf8_prefix(before, 200)}};
          }
          if (at == ids.size()) {
            ok = std::any_of(vocab.eos_ids().begin(), vocab.eos_ids().end(),
                             [&](uint32_t e) { return (mask[e >> 5] >> (e & 31)) & 1u; });
            break;
          }
          const uint32_t id = ids[at];
          if (!((mask[id >> 5] >> (id & 31)) & 1u)) {
            ok = false;
            break;
          }
          try {
            c.advance(id);
          } catch (const Error& e) {
            ++mm;
            failures.push_back({{"test", ti},
                                {"token", at},
                                {"mask_mismatch", e.what()},
                                {"text", utf8_prefix(text, 200)}});
            ok = valid;  // counted as a mismatch, not as a verdict
            break;
          }
        }
        if (ok != valid) {
          (valid ? vr : ia)++;
          failures.push_back(
              {{"test", ti}, {"valid", valid}, {"token", at}, {"text", utf8_prefix(text, 200)}});
        }
      }
      valid_rejected += vr;
      invalid_accepted += ia;
      mask_mismatch += mm;
      const bool pass = vr == 0 && ia == 0 && mm == 0;
      passing += pass;
      line["valid_rejected"] = vr;
      line["invalid_accepted"] = ia;
      if (mm) line["mask_mismatch"] = mm;
      line["passing"] = pass;
      if (tbm.size() > first_mask) {
        line["tbm_max_us"] = slowest;
        line["tbm_max_at"] = slowest_at;
      }
      if (!failures.empty()) line["failures"] = failures;
      if (!a.quiet) std::printf("%s\n", dump_line(line).c_str());
    }
  }
  double sum = 0, mx = 0;
  for (double v : tbm) {
    sum += v;
    mx = std::max(mx, v);
  }
  json top = json::array();
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [k, n] : errors) ranked.push_back({n, k});
  std::sort(ranked.rbegin(), ranked.rend());
  for (size_t i = 0; i < ranked.size() && i < 10; ++i)
    top.push_back({{"count", ranked[i].first}, {"error", ranked[i].second}});
  const json summary = {{"summary", true},
                        {"impl", "nextok"},
                        {"schemas", schemas},
                        {"passing", passing},
                        {"compile_error", compile_error},
                        {"valid_rejected", valid_rejected},
                        {"invalid_accepted", invalid_accepted},
                        {"mask_mismatch", mask_mismatch},
                        {"timeout", 0},
                        {"masks", tbm.size()},
                        {"tbm_us",
                         {{"avg", tbm.empty() ? 0 : sum / static_cast<double>(tbm.size())},
                          {"p50", percentile(tbm, 0.5)},
                          {"p99", percentile(tbm, 0.99)},
                          {"max", mx}}},
                        {"ttfm_us",
                         {{"p50", percentile(ttfm, 0.5)},
                          {"p90", percentile(ttfm, 0.9)},
                          {"p99", percentile(ttfm, 0.99)}}},
                        // ConstraintLimits::max_compile_bytes as counted, MiB
                        {"compile_mib",
                         {{"p50", percentile(compile_mib, 0.5)},
                          {"p99", percentile(compile_mib, 0.99)},
                          {"max", percentile(compile_mib, 1.0)}}},
                        {"top_compile_errors", top}};
  std::printf("%s\n", a.json_lines ? summary.dump().c_str() : summary.dump(1).c_str());
  std::fflush(stdout);
  run_anchors(a);
  // A test gate: no invalid instance accepted, and no fewer passing
  // schemas than the recorded baseline.
  return invalid_accepted == 0 && mask_mismatch == 0 && passing >= a.min_passing ? 0 : 1;
}

}  // namespace

std::function<int()> add_maskbench(CLI::App& app) {
  auto a = std::make_shared<MaskbenchArgs>();
  CLI::App* cmd = app.add_subcommand("maskbench",
                                     "MaskBench-style correctness and mask timing on schema files");
  cmd->add_option("--tokenizer", a->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  cmd->add_option("paths", a->paths,
                  "Schema files or folders (MaskBench or JSON-Schema-Test-Suite format)")
      ->required();
  cmd->add_flag("--json", a->json_lines, "Print the summary as one JSON line");
  cmd->add_flag("--lenient", a->lenient,
                "Ignore unsupported keywords instead of failing the schema");
  cmd->add_flag("--compact", a->compact, "No whitespace between JSON tokens");
  cmd->add_flag("--quiet", a->quiet, "Only the summary line");
  cmd->add_option("--limit", a->limit, "Stop after this many schemas");
  cmd->add_option("--max-compile-ms", a->max_compile_ms,
                  "Compile budget per schema (ConstraintLimits::max_compile_ms)");
  cmd->add_option("--min-passing", a->min_passing, "Exit 1 when fewer schemas pass (a baseline)");
  cmd->add_option("--anchor", a->anchors,
                  "Also run llguidance / xgrammar / outlines-core on the same files");
  cmd->add_option("--python", a->python, "Python with the anchor packages");
  return [=]() { return cmd->parsed() ? run(*a) : -1; };
}

}  // namespace nextok::tools
