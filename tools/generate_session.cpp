#include "generate_session.hpp"

#include <chrono>
#include <cstdio>

#include "commands.hpp"
#include "default_model.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"
#include "npy.hpp"

namespace nextok::tools {

namespace {

// Keeps a copy of every row the loop reads (for --dump-logits).
class RecordingModel final : public Model {
 public:
  explicit RecordingModel(Model& inner) : inner_(inner) {}
  std::size_t logits_width() const override { return inner_.logits_width(); }
  std::size_t context_length() const override { return inner_.context_length(); }
  void enqueue(std::span<const std::int32_t> t, bool all) override { inner_.enqueue(t, all); }
  void truncate(std::size_t n) override { inner_.truncate(n); }
  LogitsView logits() override {
    const LogitsView v = inner_.logits();
    const auto* p = static_cast<const float*>(v.data);
    rows.insert(rows.end(), p, p + v.rows * v.vocab);
    n_rows += v.rows;
    return v;
  }
  std::vector<float> rows;
  std::int64_t n_rows = 0;

 private:
  Model& inner_;
};

std::vector<std::int32_t> parse_ids(std::string_view text) {
  std::vector<std::int32_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    out.push_back(parse_token_id(text.substr(i, end - i), "prompt-ids"));
    i = end + 1;
  }
  return out;
}

}  // namespace

void GenerateArgs::add_to(CLI::App& cmd) {
  cmd.add_option("--model", model, "default (SmolLM2-135M-Instruct, fetched once) or a GGUF path");
  cmd.add_option("--prompt", prompt, "User message (formatted with the chat template)");
  cmd.add_option("--chat", chat, "Messages: a JSON file, or inline JSON starting with '['");
  cmd.add_option("--system", system, "System message");
  cmd.add_option("--prompt-ids", prompt_ids, "Exact prompt token ids, comma-separated");
  cmd.add_flag("--raw", raw, "Use --prompt as is, without the chat template");
  sampling.temperature = 0.0f;  // generate is greedy unless asked otherwise
  sampling.add_to(cmd);
  cmd.add_flag("--json-object", json_object, "Constrain the answer to a JSON object");
  cmd.add_option("--json-schema", json_schema, "Constrain the answer to a JSON Schema (file)");
  grammar.add_to(cmd);
  cmd.add_option("--logprobs", logprobs, "Top-K logprobs per token (<= 20)");
  cmd.add_option("--max-tokens", max_tokens, "Most tokens to generate");
  cmd.add_option("--stop", stop, "Stop string (repeatable)");
  cmd.add_flag("--stream", stream, "Print text as it is produced");
  cmd.add_option("--speculative", speculative,
                 "ngram: prompt-lookup drafts (verified stochastically when sampling)")
      ->check(CLI::IsMember({"", "ngram", "ngram-stochastic"}));
  cmd.add_option("--draft", draft, "Draft tokens per speculative step");
  cmd.add_option("--thinking-budget", thinking_budget,
                 "Reasoning tokens before </think> is forced");
  cmd.add_option("--threads", threads, "CPU threads (0 = all)");
  cmd.add_flag("--json", json, "Print one JSON object: text, tokens, logprobs, stats");
  cmd.add_flag("--show-reasoning", show_reasoning, "Stream reasoning text to stderr");
  cmd.add_option("--dump-logits", dump_logits, "Write every sampled row to this .npy");
}

GenerateSession::GenerateSession(GenerateArgs& a) : a_(a) {
  const auto t0 = std::chrono::steady_clock::now();
  FetchOptions fetch;
  fetch.python = default_python();
  fetch.progress = [](std::string_view msg) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(msg.size()), msg.data());
  };
  LlamaOptions lo;
  lo.threads = a.threads;
  model_ = LlamaModel::load(resolve_model(a.model, fetch), lo);
  load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Tokenizer& tok = model_->tokenizer();

  // The prompt.
  std::string rendered;
  if (!a.prompt_ids.empty()) {
    prompt_ = parse_ids(a.prompt_ids);
  } else if (a.raw) {
    if (a.prompt.empty())
      throw Error(ErrorCode::kInvalidArgument, "prompt", "--raw needs --prompt");
    const auto ids = tok.encode(a.prompt);
    prompt_.assign(ids.begin(), ids.end());
  } else {
    std::vector<ChatMessage> messages;
    if (!a.chat.empty()) {
      messages = parse_messages(a.chat.front() == '[' ? a.chat : read_file(a.chat));
    } else if (!a.prompt.empty()) {
      if (!a.system.empty()) messages.push_back({"system", a.system, std::nullopt, {}});
      messages.push_back({"user", a.prompt, std::nullopt, {}});
    } else {
      throw Error(ErrorCode::kInvalidArgument, "prompt", "give --prompt, --chat or --prompt-ids");
    }
    if (!a.chat.empty() && !a.system.empty()) {
      messages.insert(messages.begin(), {"system", a.system, std::nullopt, {}});
    }
    if (!tok.chat_template()) {
      throw Error(ErrorCode::kUnsupported, "chat_template",
                  "the model has no chat template; use --raw or --prompt-ids");
    }
    const auto tmpl = ChatTemplate::detect(*tok.chat_template(), tok.bos_token(), tok.eos_token());
    rendered = tmpl.apply(messages);
    const auto ids = tok.encode(rendered);
    prompt_.assign(ids.begin(), ids.end());
  }

  // Constraint.
  if (a.grammar.given() && (a.json_object || !a.json_schema.empty())) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "a grammar (--regex, --grammar, --choice) or JSON (--json-object, --json-schema), "
                "not both");
  }
  if (a.grammar.given()) {
    cfg_grammar_ = a.grammar.compile(TokenIndex::build(tok.shared_vocab()));
    constraint_ = std::make_unique<GrammarConstraint>(cfg_grammar_);
  }
  if (a.json_object || !a.json_schema.empty()) {
    if (a.json_object && !a.json_schema.empty()) {
      throw Error(ErrorCode::kInvalidArgument, "json-schema",
                  "--json-object or --json-schema, not both");
    }
    const auto index = TokenIndex::build(tok.shared_vocab());
    grammar_ = a.json_object ? JsonGrammar::any_object(index)
                             : JsonGrammar::from_schema(index, read_file(a.json_schema));
    constraint_ = std::make_unique<JsonConstraint>(grammar_);
  }

  // Sampling, stops, logprobs, think routing and speculation: the same
  // plan the server builds from a request.
  GenerationSpec spec;
  spec.sampler = a.sampling.sampler();
  spec.sampler.top_logprobs_k = a.logprobs;
  spec.penalties = a.sampling.penalties(static_cast<std::int64_t>(tok.vocab().size()));
  spec.max_tokens = a.max_tokens;
  spec.stop = a.stop;
  spec.thinking_budget = a.thinking_budget;
  if (!a.speculative.empty()) spec.speculation = Speculation::kNgram;
  spec.max_draft = a.draft;
  plan_ = GenerationPlan::build(spec, tok.vocab(), rendered, constraint_.get());
}

GenerateSession::~GenerateSession() = default;

void GenerateSession::reset() {
  model_->truncate(0);
  if (constraint_) constraint_->reset();
}

GenerateResult GenerateSession::run(const TokenCallback& on_token) {
  if (a_.dump_logits.empty())
    return generate(*model_, tokenizer().vocab(), prompt_, plan_.options, on_token);
  RecordingModel rec(*model_);
  GenerateResult r = generate(rec, tokenizer().vocab(), prompt_, plan_.options, on_token);
  write_npy_f32(a_.dump_logits, rec.rows.data(), rec.n_rows,
                static_cast<std::int64_t>(model_->logits_width()));
  return r;
}

nlohmann::json GenerateSession::stats_json(const GenerateResult& r) const {
  const auto& s = r.stats;
  const double n = static_cast<double>(r.tokens.size());
  return {
      {"load_s", load_seconds_},
      {"prompt_tokens", prompt_.size()},
      {"prefill_tokens_per_s", static_cast<double>(prompt_.size()) / s.prefill_seconds},
      {"decode_tokens", r.tokens.size()},
      {"decode_tokens_per_s", s.decode_seconds > 0 ? n / s.decode_seconds : 0.0},
      {"sampler_share", s.decode_seconds > 0 ? s.sampler_seconds / s.decode_seconds : 0.0},
      {"constraint_share", s.decode_seconds > 0 ? s.constraint_seconds / s.decode_seconds : 0.0},
      {"steps", s.steps},
      {"drafted", s.drafted},
      {"accepted", s.accepted},
      {"forced", s.forced}};
}

std::string GenerateSession::stats_line(const GenerateResult& r) const {
  const auto j = stats_json(r);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "nextok: %s | prompt %zu tok, prefill %.1f tok/s | %zu tok, decode %.1f tok/s | "
                "sampler %.2f%%, constraint %.2f%% of step time | finish %s",
                model_->config().name.c_str(), prompt_.size(),
                j["prefill_tokens_per_s"].get<double>(), r.tokens.size(),
                j["decode_tokens_per_s"].get<double>(), 100.0 * j["sampler_share"].get<double>(),
                100.0 * j["constraint_share"].get<double>(), finish_reason_name(r.finish));
  std::string line = buf;
  if (r.stats.drafted > 0) {
    std::snprintf(buf, sizeof buf, " | speculative: %zu of %zu drafts accepted", r.stats.accepted,
                  r.stats.drafted);
    line += buf;
  }
  return line;
}

}  // namespace nextok::tools
