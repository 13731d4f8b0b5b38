// `nextok json-generate`: random constrained generations, for soundness
// testing against an external validator. Each schema (a file, or one per
// line of a JSONL file) gets --count random walks: every step picks a token
// uniformly among those the mask allows (now and then among the allowed
// tokens that close a string or container, and EOS with --stop-p once
// allowed). One JSON line per generation.
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "mask_bits.hpp"
#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"
#include "nextok/rng.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok::tools {
namespace {

using json = nlohmann::json;

struct GenerateArgs {
  std::string tokenizer, schema_file, schemas_jsonl;
  bool json_object = false;
  bool lenient = false;
  size_t count = 10;
  size_t max_tokens = 256;
  uint64_t seed = 0;
  float close_p = 0.3f;
  float stop_p = 0.7f;
};

int run(const GenerateArgs& a) {
  const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
  const Vocabulary& vocab = tok.vocab();
  const auto index = TokenIndex::build(tok.shared_vocab());
  JsonConstraintOptions opt;
  opt.strict = !a.lenient;
  std::vector<std::string> schemas;
  if (!a.schema_file.empty()) schemas.push_back(read_file(a.schema_file));
  if (!a.schemas_jsonl.empty()) {
    std::istringstream lines(read_file(a.schemas_jsonl));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) schemas.push_back(line);
  }
  if (a.json_object) schemas.push_back("");
  // Tokens that close strings and containers, preferred now and then so
  // that most walks end within the token limit.
  std::vector<uint32_t> mask(bitmask_words(vocab.size())), closing(mask.size()),
      closes(mask.size());
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    if (vocab.bytes(id).find_first_of("\"}]") != std::string_view::npos)
      closes[id >> 5] |= 1u << (id & 31);
  }
  for (size_t si = 0; si < schemas.size(); ++si) {
    std::shared_ptr<const JsonGrammar> g;
    try {
      g = schemas[si].empty() ? JsonGrammar::any_object(index, opt)
                              : JsonGrammar::from_schema(index, schemas[si], opt);
    } catch (const Error& e) {
      std::printf("%s\n", json{{"schema", si}, {"error", e.what()}}.dump().c_str());
      continue;
    }
    for (size_t k = 0; k < a.count; ++k) {
      Pcg32 rng = Pcg32::for_seed(a.seed + si * 1000003u + k);
      JsonConstraint c(g);
      std::string text;
      bool complete = false, dead_end = false;
      size_t steps = 0;
      for (; steps < a.max_tokens; ++steps) {
        c.step_mask(mask);
        bool eos = false;
        for (uint32_t e : vocab.eos_ids()) {
          eos |= (mask[e >> 5] >> (e & 31)) & 1u;
          mask[e >> 5] &= ~(1u << (e & 31));
        }
        for (size_t w = 0; w < mask.size(); ++w) closing[w] = mask[w] & closes[w];
        const size_t n_allowed = count_bits(mask), n_closing = count_bits(closing);
        if (eos && (n_allowed == 0 || rng.next_f32() < a.stop_p)) {
          complete = true;
          break;
        }
        if (n_allowed == 0) {  // a state nothing can follow: an engine bug
          dead_end = true;
          break;
        }
        const bool close = n_closing > 0 && rng.next_f32() < a.close_p;
        const size_t n = close ? n_closing : n_allowed;
        const size_t pick =
            std::min(n - 1, static_cast<size_t>(rng.next_f32() * static_cast<float>(n)));
        const uint32_t id = nth_bit(close ? closing : mask, pick);
        c.advance(id);
        text += vocab.bytes(id);
      }
      json line = {
          {"schema", si}, {"i", k}, {"complete", complete}, {"tokens", steps}, {"text", text}};
      if (dead_end) line["dead_end"] = true;
      std::printf("%s\n", line.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

std::function<int()> add_json_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "json-generate", "Constrained generations from random logits (soundness testing)");
  cmd->add_option("--tokenizer", a->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  cmd->add_option("--schema", a->schema_file, "A JSON Schema file");
  cmd->add_option("--schemas-jsonl", a->schemas_jsonl, "One JSON Schema per line");
  cmd->add_flag("--json-object", a->json_object, "Also generate under response_format json_object");
  cmd->add_flag("--lenient", a->lenient, "Ignore unsupported keywords");
  cmd->add_option("--count", a->count, "Generations per schema");
  cmd->add_option("--max-tokens", a->max_tokens, "Token limit per generation");
  cmd->add_option("--seed", a->seed, "Base seed");
  cmd->add_option("--close-p", a->close_p, "Chance of picking among closing tokens");
  cmd->add_option("--stop-p", a->stop_p, "Chance of EOS once it is allowed");
  return [=]() { return cmd->parsed() ? run(*a) : -1; };
}

}  // namespace nextok::tools
