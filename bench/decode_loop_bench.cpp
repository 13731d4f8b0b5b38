// Decode-loop benchmark: what overlapping the constraint mask with the model
// step saves, and what speculative decoding with prompt lookup saves. The
// model is the scripted model on a worker thread with a fixed step time (an
// accelerator's forward pass), over the real Qwen3 vocabulary. JSON lines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "nextok/nextok.hpp"
#include "support/scripted_model.hpp"

using namespace nextok;

namespace {

const char* kSchema = R"({"type":"object","properties":{
  "id":{"type":"string","format":"uuid"},
  "name":{"type":"string","maxLength":40},
  "email":{"type":"string","format":"email"},
  "age":{"type":"integer","minimum":0,"maximum":150},
  "tags":{"type":"array","items":{"type":"string","maxLength":16},"maxItems":6},
  "address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},
    "zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]}},
  "required":["id","name","age"]})";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Run {
  double seconds, mask_us_per_token;
  std::size_t tokens, steps, drafted, accepted;
};

Run once(const std::vector<std::int32_t>& prompt, const std::vector<std::int32_t>& script,
         int step_us, GenerateOptions opt, const std::shared_ptr<const JsonGrammar>& grammar,
         const Vocabulary& vocab) {
  testing::ScriptedModelOptions mo;
  mo.threaded = true;
  mo.step_time = std::chrono::microseconds(step_us);
  mo.script = script;
  testing::ScriptedModel model(mo);
  std::unique_ptr<JsonConstraint> c;
  if (grammar) {
    c = std::make_unique<JsonConstraint>(grammar);
    opt.constraint = c.get();
  }
  const auto r = generate(model, vocab, prompt, opt);
  const double n = static_cast<double>(r.tokens.size());
  return {r.stats.decode_seconds, 1e6 * r.stats.constraint_seconds / n,
          r.tokens.size(),        r.stats.steps,
          r.stats.drafted,        r.stats.accepted};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s QWEN3_TOKENIZER_DIR [repeats]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const Tokenizer tok = Tokenizer::from_dir(argv[1]);
  const auto& vocab = tok.vocab();
  auto enc = [&](const std::string& s) {
    const auto ids = tok.encode(s);
    return std::vector<std::int32_t>(ids.begin(), ids.end());
  };
  const auto prompt =
      enc("<|im_start|>user\nDescribe a user as JSON.<|im_end|>\n<|im_start|>assistant\n");
  const auto index = TokenIndex::build(tok.shared_vocab());
  const auto grammar = JsonGrammar::from_schema(index, kSchema);

  // 1. Mask/forward overlap: same tokens, the mask built while the model runs.
  for (int step_us : {0, 1000, 4000}) {
    std::vector<double> t[2], mask[2];
    std::size_t tokens = 0;
    for (int rep = 0; rep < repeats; ++rep) {
      for (int overlap = 0; overlap < 2; ++overlap) {
        GenerateOptions opt;
        opt.sampler.temperature = 0.8f;
        opt.sampler.seed = static_cast<std::uint64_t>(rep + 1);
        opt.max_tokens = 160;
        opt.overlap_mask = overlap == 1;
        const Run r = once(prompt, {}, step_us, opt, grammar, vocab);
        t[overlap].push_back(1e6 * r.seconds / static_cast<double>(r.tokens));
        mask[overlap].push_back(r.mask_us_per_token);
        tokens = r.tokens;
      }
    }
    const double serial = median(t[0]), overlapped = median(t[1]);
    std::printf(
        "{\"bench\":\"decode_mask_overlap\",\"vocab\":%zu,\"step_us\":%d,\"tokens\":%zu,"
        "\"serial_us_per_token\":%.1f,\"overlap_us_per_token\":%.1f,\"mask_us_per_token\":%.1f,"
        "\"saved_us_per_token\":%.1f,\"speedup\":%.3f}\n",
        vocab.size(), step_us, tokens, serial, overlapped, median(mask[0]), serial - overlapped,
        serial / overlapped);
  }

  // 2. Speculative decoding with prompt lookup (greedy, identical output).
  std::vector<std::int32_t> repetitive;
  for (int i = 0; i < 12; ++i) {
    const auto s = enc(" for (int i = 0; i < n; ++i) sum += a[i];\n");
    repetitive.insert(repetitive.end(), s.begin(), s.end());
  }
  NgramDrafter ngram(3, 1);
  for (const auto& [name, script] :
       {std::pair<const char*, std::vector<std::int32_t>>{"repetitive", repetitive},
        std::pair<const char*, std::vector<std::int32_t>>{"noise", {}}}) {
    for (std::uint32_t k : {0u, 2u, 4u, 8u}) {
      std::vector<double> t;
      Run r{};
      for (int rep = 0; rep < repeats; ++rep) {
        GenerateOptions opt;
        opt.max_tokens = 192;
        if (k > 0) {
          opt.speculative.drafter = &ngram;
          opt.speculative.max_draft = k;
        }
        r = once(prompt, script, 2000, opt, nullptr, vocab);
        t.push_back(1e6 * r.seconds / static_cast<double>(r.tokens));
      }
      std::printf(
          "{\"bench\":\"decode_speculative\",\"impl\":\"%s\",\"script\":\"%s\",\"step_us\":2000,"
          "\"k\":%u,\"tokens\":%zu,\"steps\":%zu,\"drafted\":%zu,\"accepted\":%zu,"
          "\"acceptance\":%.3f,\"tokens_per_step\":%.3f,\"us_per_token\":%.1f}\n",
          k ? "ngram" : "none", name, k, r.tokens, r.steps, r.drafted, r.accepted,
          r.drafted ? static_cast<double>(r.accepted) / static_cast<double>(r.drafted) : 0.0,
          static_cast<double>(r.tokens) / static_cast<double>(r.steps + 1), median(t));
    }
  }
  return 0;
}
