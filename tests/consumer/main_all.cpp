// A downstream project: find_package(nextok) with every component, one
// sampling step and one encode with a tiny byte-level BPE tokenizer.
#include <cstdio>
#include <nextok/nextok.hpp>
#include <vector>

int main() {
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.5f};
  nextok::SamplerConfig cfg;
  cfg.temperature = 0.8f;
  cfg.top_k = 2;
  nextok::Sampler sampler(cfg, {});
  const auto r = sampler.next(nextok::LogitsView::f32(logits));
  bool ok = (r.token == 1 || r.token == 3) && nextok::argmax(nextok::LogitsView::f32(logits)) == 1;

  const char* json = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3},
    "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
    "use_regex": true}, "decoder": {"type": "ByteLevel"}, "added_tokens": []})";
  const auto tok = nextok::Tokenizer::from_json(json);
  const auto ids = tok.encode("ab a");
  ok = ok && ids == std::vector<uint32_t>{2, 3, 0} && tok.decode(ids) == "ab a";
  std::printf("consumer: sampled %d, encoded %zu ids, %s\n", r.token, ids.size(),
              ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
