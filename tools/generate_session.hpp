// One generation as the CLI runs it: the model, the prompt, the constraint
// and the decode-loop options, from command-line flags. Shared by
// `nextok generate` and `nextok bench decode`.
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "grammar_flags.hpp"
#include "nextok/generate.hpp"
#include "nextok/generation_spec.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/llama.hpp"
#include "sampling_flags.hpp"

namespace nextok::tools {

struct GenerateArgs {
  std::string model = "default";
  std::string prompt;
  std::string chat;  // a messages file, or inline JSON starting with '['
  std::string system;
  std::string prompt_ids;  // "ID,ID,…": exact prompt tokens (no template)
  bool raw = false;        // --prompt without the chat template
  SamplingFlags sampling;
  bool json_object = false;
  std::string json_schema;  // a file
  GrammarFlags grammar;     // --regex / --grammar / --choice
  std::uint32_t logprobs = 0;
  std::uint32_t max_tokens = 256;
  std::vector<std::string> stop;
  bool stream = false;
  std::string speculative;  // "" or "ngram" ("ngram-stochastic": the same)
  std::uint32_t draft = 4;
  std::optional<std::uint32_t> thinking_budget;
  unsigned threads = 0;
  bool json = false;
  bool show_reasoning = false;
  std::string dump_logits;  // .npy of every row the loop sampled from

  void add_to(CLI::App& cmd);
};

class GenerateSession {
 public:
  explicit GenerateSession(GenerateArgs& args);
  ~GenerateSession();

  GenerateResult run(const TokenCallback& on_token = {});
  const std::vector<std::int32_t>& prompt() const noexcept { return prompt_; }
  const Tokenizer& tokenizer() const noexcept { return model_->tokenizer(); }
  LlamaModel& model() noexcept { return *model_; }
  GenerateOptions& options() noexcept { return plan_.options; }
  // Starts again from an empty context (benchmark repeats).
  void reset();

  nlohmann::json stats_json(const GenerateResult& r) const;
  std::string stats_line(const GenerateResult& r) const;

 private:
  GenerateArgs& a_;
  std::unique_ptr<LlamaModel> model_;
  std::vector<std::int32_t> prompt_;
  std::shared_ptr<const JsonGrammar> grammar_;
  std::shared_ptr<const Grammar> cfg_grammar_;
  std::unique_ptr<ConstraintEngine> constraint_;
  GenerationPlan plan_;
  double load_seconds_ = 0.0;
};

}  // namespace nextok::tools
