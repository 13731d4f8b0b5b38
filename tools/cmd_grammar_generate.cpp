// `nextok grammar-generate`: random constrained generations under a
// grammar (--regex / --grammar / --choice), for soundness tests against an
// external recogniser, and --walk FILE: texts (one JSON string per line)
// tokenized and walked token by token, EOS at the end, for completeness
// tests. One JSON line per generation or text; --timing adds mask times.
#include <bit>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "grammar_flags.hpp"
#include "mask_bits.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "nextok/rng.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok::tools {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string tokenizer, walk;
  GrammarFlags grammar;
  size_t count = 0;
  size_t max_tokens = 128;
  uint64_t seed = 0;
  float stop_p = 0.5f;
  // Now and then pick among allowed tokens holding one of these bytes
  // (closing quotes, brackets, newlines), so that most walks end in time.
  std::string close_bytes;
  bool close_special = false;
  float close_p = 0.0f;
  bool timing = false;
  bool parse_special = false;
};

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

void print(const json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

int run(const Args& a) {
  const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
  const Vocabulary& vocab = tok.vocab();
  const auto index = TokenIndex::build(tok.shared_vocab());
  std::shared_ptr<const Grammar> g;
  const auto c0 = Clock::now();
  try {
    g = a.grammar.compile(index);
  } catch (const Error& e) {
    print({{"error", e.what()}, {"param", e.param()}});
    return 1;
  }
  print({{"compiled_ms", us_since(c0) / 1000.0}});
  std::vector<uint32_t> mask(bitmask_words(vocab.size())), closes(mask.size()),
      closing(mask.size());
  for (uint32_t id = 0; id < vocab.size() && (!a.close_bytes.empty() || a.close_special); ++id) {
    const bool special = a.close_special && vocab.is_special(id) && !vocab.is_eos(id);
    if (special || (!a.close_bytes.empty() &&
                    vocab.bytes(id).find_first_of(a.close_bytes) != std::string_view::npos))
      closes[id >> 5] |= 1u << (id & 31);
  }
  for (size_t k = 0; k < a.count; ++k) {
    Pcg32 rng = Pcg32::for_seed(a.seed + k);
    GrammarConstraint c(g);
    std::string text;
    std::vector<uint32_t> ids;
    bool complete = false, dead_end = false;
    size_t steps = 0;
    std::vector<double> times;
    for (; steps < a.max_tokens; ++steps) {
      const auto m0 = Clock::now();
      c.step_mask(mask);
      if (a.timing) times.push_back(us_since(m0));
      bool eos = false;
      for (uint32_t e : vocab.eos_ids()) {
        eos |= (mask[e >> 5] >> (e & 31)) & 1u;
        mask[e >> 5] &= ~(1u << (e & 31));
      }
      size_t n = 0;
      for (uint32_t w : mask) n += static_cast<size_t>(std::popcount(w));
      if (eos && (n == 0 || rng.next_f32() < a.stop_p)) {
        complete = true;
        break;
      }
      if (n == 0) {  // nothing may follow and EOS is not allowed: an engine bug
        dead_end = true;
        break;
      }
      // Now and then, among the allowed tokens that hold a closing byte:
      // walks then finish what they open.
      size_t nc = 0;
      for (size_t w = 0; w < mask.size(); ++w) {
        closing[w] = mask[w] & closes[w];
        nc += static_cast<size_t>(std::popcount(closing[w]));
      }
      const bool close = nc > 0 && rng.next_f32() < a.close_p;
      const size_t m = close ? nc : n;
      const size_t pick =
          std::min(m - 1, static_cast<size_t>(rng.next_f32() * static_cast<float>(m)));
      const uint32_t id = nth_bit(close ? closing : mask, pick);
      c.advance(id);
      text += vocab.bytes(id);
      ids.push_back(id);
    }
    json line = {{"i", k}, {"complete", complete}, {"tokens", steps}, {"text", text}, {"ids", ids}};
    if (dead_end) line["dead_end"] = true;
    if (a.timing) line["mask_us"] = times;
    print(line);
  }
  if (!a.walk.empty()) {
    std::istringstream lines(read_file(a.walk));
    EncodeOptions eo;
    eo.parse_special = a.parse_special;
    size_t k = 0;
    for (std::string l; std::getline(lines, l); ++k) {
      if (l.empty()) continue;
      const std::string text = json::parse(l).get<std::string>();
      const std::vector<uint32_t> ids = tok.encode(text, eo);
      GrammarConstraint c(g);
      std::vector<double> times;
      json out = {{"i", k}, {"tokens", ids.size()}};
      bool ok = true;
      for (size_t at = 0; at <= ids.size() && ok; ++at) {
        const auto m0 = Clock::now();
        c.step_mask(mask);
        if (a.timing) times.push_back(us_since(m0));
        if (at == ids.size()) {
          const uint32_t e = vocab.eos_ids().empty() ? 0 : vocab.eos_ids()[0];
          ok = !vocab.eos_ids().empty() && ((mask[e >> 5] >> (e & 31)) & 1u);
          if (!ok) out["refused_eos"] = true;
        } else if (!((mask[ids[at] >> 5] >> (ids[at] & 31)) & 1u)) {
          ok = false;
          out["refused_at"] = at;
        } else {
          c.advance(ids[at]);
        }
      }
      out["accepted"] = ok;
      if (a.timing) out["mask_us"] = times;
      print(out);
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

std::function<int()> add_grammar_generate(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "grammar-generate", "Random generations and token-by-token walks under a grammar (testing)");
  cmd->add_option("--tokenizer", a->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  a->grammar.add_to(*cmd);
  cmd->add_option("--count", a->count, "Random generations");
  cmd->add_option("--max-tokens", a->max_tokens, "Token limit per generation");
  cmd->add_option("--seed", a->seed, "Base seed");
  cmd->add_option("--stop-p", a->stop_p, "Chance of EOS once it is allowed");
  cmd->add_option("--close-bytes", a->close_bytes, "Bytes of the tokens --close-p prefers");
  cmd->add_flag("--close-special", a->close_special,
                "--close-p also prefers special tokens (not EOS)");
  cmd->add_option("--close-p", a->close_p, "Chance of picking among tokens with --close-bytes");
  cmd->add_option("--walk", a->walk, "Texts to walk token by token (one JSON string a line)");
  cmd->add_flag("--timing", a->timing, "Report every mask's time (microseconds)");
  cmd->add_flag("--parse-special", a->parse_special,
                "Walked texts may spell special tokens (<|eot_id|>), read as those tokens");
  return [=]() { return cmd->parsed() ? run(*a) : -1; };
}

}  // namespace nextok::tools
