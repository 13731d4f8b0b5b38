// A downstream project that needs only the sampler: find_package(nextok
// COMPONENTS sampling), one seeded sampling step and an argmax.
#include <cstdio>
#include <nextok/sampler.hpp>
#include <vector>

int main() {
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.5f};
  nextok::SamplerConfig cfg;
  cfg.temperature = 0.8f;
  cfg.top_k = 2;
  nextok::Sampler sampler(cfg, {});
  const auto r = sampler.next(nextok::LogitsView::f32(logits));
  const bool ok =
      (r.token == 1 || r.token == 3) && nextok::argmax(nextok::LogitsView::f32(logits)) == 1;
  std::printf("consumer (sampling): sampled %d, %s\n", r.token, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
