// Tool-call grammars (docs/tool-calls.md): compile time of the structural tag
// over N function tools, and the mask time per token along a natural call,
// next to the plain JSON grammar of the same call object (the engine it
// wraps). JSON lines on stdout.
//   nextok_structural_tag_bench TOKENIZER_DIR [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nextok/mask.hpp"
#include "nextok/structural_tag.hpp"
#include "nextok/tokenizer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// One tool with a few typed parameters; names differ per tool, and one
// optional parameter's name per repeat, so that every repeat compiles its
// argument objects afresh (shared key automata are interned per process);
// bench/tool_compile_anchor.py builds the same schemas for the anchors.
std::string tool_object(int i, int rep) {
  const std::string n = std::to_string(i);
  const std::string q = std::to_string(rep) + "_" + n;
  return R"({"type": "object", "properties": {"name": {"const": "tool_)" + n +
         R"("}, "arguments": {"type": "object", "properties": {"city": {"type": "string"},
         "unit": {"enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer",
         "minimum": 1, "maximum": 14}, "q)" +
         q +
         R"(": {"type": "boolean"}}, "required": ["city", "unit"],
         "additionalProperties": false}}, "required": ["name", "arguments"],
         "additionalProperties": false})";
}

std::string call_schema(int tools, int rep) {
  std::string s = "{\"anyOf\": [";
  for (int i = 0; i < tools; ++i) s += (i ? ", " : "") + tool_object(i, rep);
  return s + "]}";
}

struct Stats {
  double avg, p50, p99, max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const double n = static_cast<double>(v.size());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * n))]; };
  return {sum / n, at(0.5), at(0.99), v.back()};
}

template <class C>
std::vector<double> walk(C& c, const std::vector<uint32_t>& ids, size_t vocab) {
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab));
  std::vector<double> t;
  for (uint32_t id : ids) {
    const auto t0 = Clock::now();
    c.step_mask(mask);
    t.push_back(us_since(t0));
    c.advance(id);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TOKENIZER_DIR [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const auto tok = nextok::Tokenizer::from_dir(argv[1]);
  const auto t_index = Clock::now();
  const auto index = nextok::TokenIndex::build(tok.shared_vocab());
  std::printf("{\"bench\": \"token_index_build\", \"ms\": %.1f}\n", us_since(t_index) / 1000);
  const std::string text =
      "<tool_call>\n{\"name\": \"tool_0\", \"arguments\": {\"city\": \"Paris\", \"unit\": "
      "\"celsius\", \"days\": 3}}\n</tool_call>";
  const std::string json_text = text.substr(11, text.size() - 11 - 13);
  for (int tools : {1, 10, 100}) {
    std::vector<double> compile_json, compile_tag, mask_tag, mask_json;
    for (int r = 0; r < repeats; ++r) {
      const std::string schema = call_schema(tools, r + 1000 * tools);
      auto t0 = Clock::now();
      auto jg = nextok::JsonGrammar::from_schema(index, schema);
      compile_json.push_back(us_since(t0) / 1000);
      nextok::StructuralTagFormat f;
      f.begin = "<tool_call>";
      f.end = "</tool_call>";
      f.content = jg;
      f.text_before = false;
      f.min_segments = 1;
      t0 = Clock::now();
      auto tg = nextok::StructuralTagGrammar::build(index, f);
      compile_tag.push_back(us_since(t0) / 1000);
      // The JSON walk first and then the tag walk, and the other way round
      // on the next repeat: whichever comes first fills the caches the
      // grammars share (the standard string DFA's first-time entries).
      auto walk_both = [&](bool json_first) {
        if (json_first) {
          nextok::JsonConstraint jc(jg);
          auto b = walk(jc, tok.encode(json_text), tok.vocab().size());
          mask_json.insert(mask_json.end(), b.begin(), b.end());
        }
        nextok::StructuralTagConstraint tc(tg);
        auto a = walk(tc, tok.encode(text), tok.vocab().size());
        mask_tag.insert(mask_tag.end(), a.begin(), a.end());
        if (!json_first) {
          nextok::JsonConstraint jc(jg);
          auto b = walk(jc, tok.encode(json_text), tok.vocab().size());
          mask_json.insert(mask_json.end(), b.begin(), b.end());
        }
      };
      walk_both(r % 2 == 0);
    }
    const Stats cj = stats(compile_json), ct = stats(compile_tag), mt = stats(mask_tag),
                mj = stats(mask_json);
    std::printf(
        "{\"bench\": \"tool_call_grammar\", \"tools\": %d, \"json_compile_ms_p50\": %.2f, "
        "\"tag_build_ms_p50\": %.2f, \"tag_mask_us\": {\"avg\": %.1f, \"p50\": %.1f, \"p99\": "
        "%.1f, \"max\": %.1f}, \"json_mask_us\": {\"avg\": %.1f, \"p50\": %.1f, \"p99\": %.1f, "
        "\"max\": %.1f}}\n",
        tools, cj.p50, ct.p50, mt.avg, mt.p50, mt.p99, mt.max, mj.avg, mj.p50, mj.p99, mj.max);
  }
  return 0;
}
