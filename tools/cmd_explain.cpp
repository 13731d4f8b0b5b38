// `nextok explain`: how many tokens survive each stage, and the top
// candidates before and after the pipeline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "nextok/nextok.hpp"
#include "sampling_flags.hpp"

namespace nextok::tools {
namespace {

struct ExplainArgs {
  LogitsFlags logits;
  SamplingFlags sampling;
  bool json = false;
  int show = 10;
};

int run_explain(const ExplainArgs& a) {
  const PreparedStep step = prepare_step(a.logits, a.sampling);
  const LoadedLogits& l = step.logits;
  const SamplerConfig& cfg = step.sampler;
  const PenaltyConfig& pen = step.penalties;
  const std::vector<std::int32_t>& history = step.history;
  const StepInput in{l.view, {}, history};

  Workspace ws;
  StageTrace trace;
  const Distribution dist = sampling_distribution(in, cfg, pen, ws, &trace);
  Pcg32 rng = Pcg32::for_seed(cfg.seed_or_default());
  const std::int32_t token = sample_token(in, cfg, pen, rng, ws);
  const auto raw = compute_top_logprobs(l.view, token, kMaxTopLogprobs);

  if (a.json) {
    nlohmann::json j;
    j["vocab"] = l.view.vocab;
    j["dtype"] = dtype_name(l.view.dtype);
    j["filter_order"] = filter_order_name(cfg.filter_order);
    j["config"] = {{"temperature", cfg.temperature},
                   {"top_p", cfg.top_p},
                   {"top_k", cfg.top_k},
                   {"min_p", cfg.min_p},
                   {"repetition_penalty", pen.repetition_penalty},
                   {"presence_penalty", pen.presence_penalty},
                   {"frequency_penalty", pen.frequency_penalty},
                   {"window", pen.window},
                   {"seed", cfg.seed_or_default()}};
    j["stages"] = nlohmann::json::array();
    for (const auto& s : trace.stages)
      j["stages"].push_back({{"name", s.name}, {"survivors", s.survivors}});
    j["final"] = {{"ids", dist.ids}, {"probs", dist.probs}};
    j["token"] = token;
    j["token_logprob"] = raw->token_logprob;
    j["top_raw"] = nlohmann::json::array();
    for (const auto& t : raw->top)
      j["top_raw"].push_back({{"id", t.token_id}, {"logprob", t.logprob}});
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }

  std::printf("logits  %s  V=%lld  %s\n", a.logits.path.c_str(),
              static_cast<long long>(l.view.vocab), dtype_name(l.view.dtype));
  std::printf(
      "config  order=%s T=%g top_p=%g top_k=%d min_p=%g rep=%g presence=%g "
      "frequency=%g biases=%zu history=%zu window=%u seed=%llu\n\n",
      filter_order_name(cfg.filter_order), static_cast<double>(cfg.temperature),
      static_cast<double>(cfg.top_p), cfg.top_k, static_cast<double>(cfg.min_p),
      static_cast<double>(pen.repetition_penalty), static_cast<double>(pen.presence_penalty),
      static_cast<double>(pen.frequency_penalty), pen.logit_bias.size(), history.size(), pen.window,
      static_cast<unsigned long long>(cfg.seed_or_default()));
  std::printf("  #  stage                  survivors\n");
  int n = 1;
  std::int64_t prev = l.view.vocab;
  for (const auto& s : trace.stages) {
    std::printf("%3d  %-20s %11lld", n++, s.name, static_cast<long long>(s.survivors));
    if (s.survivors < prev) std::printf("   -%lld", static_cast<long long>(prev - s.survivors));
    std::printf("\n");
    prev = s.survivors;
  }

  // Top candidates: the best by final probability, then by raw probability.
  std::map<std::int32_t, float> final_p;
  for (std::size_t i = 0; i < dist.ids.size(); ++i) final_p[dist.ids[i]] = dist.probs[i];
  std::vector<std::pair<float, std::int32_t>> order;
  for (const auto& [id, p] : final_p) order.emplace_back(p, id);
  std::sort(order.begin(), order.end(), [](auto& x, auto& y) {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  });
  std::vector<std::int32_t> shown;
  for (const auto& o : order) {
    if (static_cast<int>(shown.size()) >= a.show) break;
    shown.push_back(o.second);
  }
  std::map<std::int32_t, float> raw_lp;
  for (const auto& t : raw->top) raw_lp[t.token_id] = t.logprob;
  for (const auto& t : raw->top) {
    if (static_cast<int>(shown.size()) >= 2 * a.show) break;
    if (std::find(shown.begin(), shown.end(), t.token_id) == shown.end())
      shown.push_back(t.token_id);
  }
  std::printf("\n  token id    raw prob   final prob\n");
  for (std::int32_t id : shown) {
    const auto r = raw_lp.find(id);
    const auto f = final_p.find(id);
    char rb[32] = "        -";
    if (r != raw_lp.end())
      std::snprintf(rb, sizeof rb, "%9.6f", std::exp(static_cast<double>(r->second)));
    char fb[32] = "        -";
    if (f != final_p.end()) std::snprintf(fb, sizeof fb, "%9.6f", static_cast<double>(f->second));
    std::printf("  %8d  %s   %s%s\n", id, rb, fb, id == token ? "   <- drawn" : "");
  }
  std::printf("\n%zu tokens have nonzero final probability; seed %llu draws token %d\n",
              dist.ids.size(), static_cast<unsigned long long>(cfg.seed_or_default()), token);
  return 0;
}

}  // namespace

std::function<int()> add_explain(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  CLI::App* sub =
      app.add_subcommand("explain", "Show what each sampling stage does to a logits row");
  a->logits.add_to(*sub);
  a->sampling.add_to(*sub);
  sub->add_flag("--json", a->json, "Print one JSON object");
  sub->add_option("--show", a->show, "Candidates to list")->capture_default_str();
  return [a, sub]() { return sub->parsed() ? run_explain(*a) : -1; };
}

}  // namespace nextok::tools
