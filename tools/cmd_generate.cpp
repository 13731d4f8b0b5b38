// `nextok generate`: a real model end to end. Loads a Llama GGUF (the
// default model is fetched and verified on first use), formats the prompt
// with the model's chat template, and runs the decode loop with every
// sampling, constraint, logprob and speculative option. The text goes to
// stdout as it is produced; one stats line goes to stderr.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "generate_session.hpp"
#include "nextok/error.hpp"

namespace nextok::tools {
namespace {

using nlohmann::json;

json logprobs_json(const Tokenizer& tok, const TokenLogprobs& lp) {
  auto text = [&](std::int32_t id) {
    return tok.decode(std::vector<std::uint32_t>{static_cast<std::uint32_t>(id)});
  };
  json top = json::array();
  for (const auto& t : lp.top)
    top.push_back({{"id", t.token_id}, {"token", text(t.token_id)}, {"logprob", t.logprob}});
  return {{"id", lp.token_id},
          {"token", text(lp.token_id)},
          {"logprob", lp.token_logprob},
          {"top", top}};
}

int run_generate(GenerateArgs& a) {
  GenerateSession s(a);
  const bool stream = a.stream && !a.json;
  const auto r = s.run([&](const TokenEvent& e) {
    if (stream) {
      if (!e.reasoning.empty() && a.show_reasoning) std::fputs(e.reasoning.c_str(), stderr);
      std::fputs(e.content.c_str(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  if (a.json) {
    json out = {{"text", r.content},
                {"prompt_ids", s.prompt()},
                {"reasoning", r.reasoning},
                {"tokens", r.tokens},
                {"prompt_tokens", s.prompt().size()},
                {"finish_reason", finish_reason_name(r.finish)},
                {"stats", s.stats_json(r)}};
    if (!r.logprobs.empty()) {
      json lps = json::array();
      for (const auto& lp : r.logprobs)
        lps.push_back(lp ? logprobs_json(s.tokenizer(), *lp) : json(nullptr));
      out["logprobs"] = lps;
    }
    std::printf("%s\n", out.dump().c_str());
  } else {
    if (!stream) std::fputs(r.content.c_str(), stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }
  std::fprintf(stderr, "%s\n", s.stats_line(r).c_str());
  return 0;
}

}  // namespace

std::function<int()> add_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text with a GGUF model");
  a->add_to(*cmd);
  return [a, cmd]() { return cmd->parsed() ? run_generate(*a) : -1; };
}

}  // namespace nextok::tools
