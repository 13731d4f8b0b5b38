#include "serve_engine.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "memory.hpp"
#include "nextok/error.hpp"
#include "nextok/generation_spec.hpp"
#include "nextok/version.hpp"

namespace nextok::server {

namespace {

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

ServeEngine::ServeEngine(const EngineOptions& options) : options_(options) {
  LlamaOptions lo;
  lo.threads = options.threads;
  lo.max_context = options.max_context;
  model_ = LlamaModel::load(options.model_path, lo);
  context_ = options.max_context ? options.max_context : model_->config().context_length;
  model_id_ = options.model_id.empty() ? options.model_path.stem().string() : options.model_id;
  char fp[32];
  std::snprintf(fp, sizeof fp, "fp_%012llx",
                static_cast<unsigned long long>(
                    fnv1a(std::string(kVersion) + "|" + model_id_ + "|" +
                          std::to_string(std::filesystem::file_size(options.model_path))) &
                    0xffffffffffffull));
  fingerprint_ = fp;
  const Tokenizer& tok = model_->tokenizer();
  if (!options.chat_template_file.empty()) {
    std::ifstream in(options.chat_template_file, std::ios::binary);
    if (!in)
      throw Error(ErrorCode::kIo, "chat_template_file",
                  "cannot read the chat template " + options.chat_template_file.string());
    std::ostringstream text;
    text << in.rdbuf();
    template_ = ChatTemplate::detect(text.str(), tok.bos_token(), tok.eos_token());
  } else if (tok.chat_template()) {
    template_ = ChatTemplate::detect(*tok.chat_template(), tok.bos_token(), tok.eos_token());
  }
  index_ = TokenIndex::build(tok.shared_vocab());
  any_object_ = JsonGrammar::any_object(index_);
  background_ = std::make_unique<BackgroundPool>(options.compile_slots);
  loop_ = std::make_unique<StepLoop>(*model_, std::max<std::size_t>(1, options.parallel),
                                     options.max_queue, options.prefill_chunk);
}

ServeEngine::~ServeEngine() = default;

void ServeEngine::shutdown() {
  loop_->shutdown();
}

ToolFormat ServeEngine::tool_format() const noexcept {
  return template_ && template_->format() == ChatFormat::kLlama31 ? ToolFormat::kLlamaJson
                                                                  : ToolFormat::kHermes;
}

bool ServeEngine::serves(const std::string& model) const {
  return model.empty() || model == model_id_ || model == "default";
}

std::vector<std::int32_t> ServeEngine::prompt_ids(const ApiRequest& r,
                                                  std::string& rendered) const {
  const Tokenizer& tok = model_->tokenizer();
  if (r.endpoint == Endpoint::kCompletion && r.prompt_is_ids) {
    const auto V = static_cast<std::int64_t>(tok.vocab().size());
    for (std::size_t i = 0; i < r.prompt_ids.size(); ++i) {
      if (r.prompt_ids[i] >= V) {
        throw ApiError::bad_param(
            "prompt", "prompt[" + std::to_string(i) + "] = " + std::to_string(r.prompt_ids[i]) +
                          " is outside the vocabulary (" + std::to_string(V) + " ids).");
      }
    }
    std::vector<std::uint32_t> ids(r.prompt_ids.begin(), r.prompt_ids.end());
    rendered = tok.decode(ids);
    return r.prompt_ids;
  }
  if (r.endpoint == Endpoint::kChat) {
    if (!template_) {
      throw ApiError(400, "invalid_request_error",
                     "this model has no chat template; use /v1/completions", "messages",
                     "unsupported");
    }
    // Harmony calls need their own constraint and parser (nextok/harmony.hpp),
    // not the Hermes tags below; the runtime cannot run gpt-oss anyway.
    if (template_->format() == ChatFormat::kHarmony && r.tools.active()) {
      throw ApiError(400, "invalid_request_error",
                     "tool calls in gpt-oss harmony are not served (docs/tool-calls.md); "
                     "tool_choice none is accepted",
                     "tools", "unsupported");
    }
    ChatOptions co;
    co.enable_thinking = r.enable_thinking;
    co.tools_in_user_message = r.tools_in_user_message;
    co.builtin_tools = r.builtin_tools;
    for (const ToolSpec& t : r.tools.tools) co.tools.push_back(t.rendered);
    rendered = template_->apply(r.messages, co);
  } else {
    rendered = r.prompt;
  }
  const auto ids = tok.encode(rendered);
  return {ids.begin(), ids.end()};
}

// Under cache_mu_.
std::optional<ServeEngine::CompiledFormat> ServeEngine::cached(const std::string& key) const {
  const auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

ServeEngine::CompiledFormat ServeEngine::compile_cached(
    const std::string& key, const std::function<CompiledFormat()>& build,
    const std::atomic<bool>* cancel) const {
  auto gone = [&] { return cancel && cancel->load(); };
  auto cancelled = [] {
    return ApiError(499, "invalid_request_error", "the client closed the connection", {},
                    "client_disconnected");
  };
  {
    std::lock_guard lock(cache_mu_);
    if (auto g = cached(key)) return *g;
  }
  // Compiles run on the low-priority threads, a few at a time: a burst of
  // big schemas neither starves decoding nor multiplies the peak memory, and
  // the same schema sent by many clients compiles once (the later ones find
  // it cached when their turn comes).
  CompiledFormat g;
  background_->run([&] {
    {
      std::lock_guard lock(cache_mu_);
      if (auto c = cached(key)) {
        g = *c;
        return;
      }
      ++compiling_;
    }
    struct Done {
      const ServeEngine& e;
      ~Done() {
        {
          std::lock_guard lock(e.cache_mu_);
          --e.compiling_;
        }
        release_free_memory();  // the compile's scratch
      }
    } done{*this};
    if (gone()) throw cancelled();
    try {
      g = build();
    } catch (const ApiError&) {
      if (gone()) throw cancelled();
      throw;
    }
  });
  std::lock_guard lock(cache_mu_);
  if (cache_.count(key) == 0) {
    lru_.emplace_front(key, g);
    cache_[key] = lru_.begin();
    if (lru_.size() > options_.grammar_cache) {
      cache_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  return g;
}

std::shared_ptr<const JsonGrammar> ServeEngine::grammar(const ApiRequest& r,
                                                        const std::atomic<bool>* cancel) const {
  if (r.format == ResponseFormat::kJsonObject) return any_object_;
  return compile_cached((r.schema_strict ? "s:" : "l:") + r.schema,
                        [&] {
                          return CompiledFormat{compile_schema(r.schema, r.schema_strict, cancel,
                                                               r.format_param.c_str()),
                                                nullptr, nullptr, nullptr};
                        },
                        cancel)
      .json;
}

std::shared_ptr<const Grammar> ServeEngine::text_grammar(const ApiRequest& r,
                                                         const std::atomic<bool>* cancel) const {
  // The key holds the kind and the text; a choice's strings as a JSON array
  // (no separator could be ambiguous).
  const std::string body =
      r.format == ResponseFormat::kChoice ? nlohmann::json(r.choices).dump() : r.grammar;
  const std::string key = "g" + std::to_string(static_cast<int>(r.format)) + ":" + body;
  auto build = [&] {
    ConstraintLimits limits;
    limits.max_compile_ms = options_.max_compile_ms;
    limits.max_compile_bytes = options_.max_compile_bytes;
    limits.cancel = cancel;
    CompiledFormat c;
    try {
      switch (r.format) {
        case ResponseFormat::kRegex:
          c.grammar = Grammar::regex(index_, r.grammar, limits);
          break;
        case ResponseFormat::kChoice:
          c.grammar = Grammar::choice(index_, r.choices, limits);
          break;
        case ResponseFormat::kGbnf:
          c.grammar = Grammar::gbnf(index_, r.grammar, limits);
          break;
        case ResponseFormat::kStructuralTag:
          c.grammar = Grammar::structural_tag(index_, r.grammar, limits);
          break;
        default:
          c.grammar = Grammar::lark(index_, r.grammar, limits);
      }
    } catch (const Error& e) {
      const char* what = r.format == ResponseFormat::kRegex    ? "invalid regex: "
                         : r.format == ResponseFormat::kChoice ? "invalid choice: "
                                                               : "invalid grammar: ";
      throw ApiError(400, "invalid_request_error", what + std::string(e.what()), r.format_param,
                     "invalid_grammar");
    }
    return c;
  };
  return compile_cached(key, build, cancel).grammar;
}

std::shared_ptr<const JsonGrammar> ServeEngine::compile_schema(const std::string& schema,
                                                               bool strict,
                                                               const std::atomic<bool>* cancel,
                                                               const char* param) const {
  JsonConstraintOptions co;
  co.strict = strict;
  co.limits.max_compile_ms = options_.max_compile_ms;
  co.limits.max_compile_bytes = options_.max_compile_bytes;
  co.limits.cancel = cancel;
  try {
    return JsonGrammar::from_schema(index_, schema, co);
  } catch (const Error& e) {
    std::string where = e.param().empty() ? "" : " at " + e.param();
    throw ApiError(400, "invalid_request_error", "invalid JSON schema" + where + ": " + e.what(),
                   param, "invalid_schema");
  }
}

std::unique_ptr<ConstraintEngine> ServeEngine::constraint_for(
    const ApiRequest& r, const std::atomic<bool>* cancel) const {
  ToolRequest t = r.tools;
  t.format = tool_format();
  if (t.active() && t.format == ToolFormat::kLlamaJson) {
    // One bare call per turn (the template renders one): the whole output is
    // the call under required/named, text or a call under auto.
    const bool forced = t.choice != ToolChoice::kAuto;
    const std::string schema = t.call_schema();
    const std::string key =
        std::string("t:L") + (forced ? "f" : "a") + (t.strict() ? "s:" : "l:") + schema;
    CompiledFormat f = compile_cached(
        key,
        [&] {
          CompiledFormat c{compile_schema(schema, t.strict(), cancel, "tools"), nullptr, nullptr,
                           nullptr};
          if (!forced) c.either = JsonOrTextGrammar::build(index_, c.json, kPythonTag);
          return c;
        },
        cancel);
    if (forced) return std::make_unique<JsonConstraint>(f.json);
    return std::make_unique<JsonOrTextConstraint>(f.either);
  }
  if (t.active()) {
    const bool forced = t.choice != ToolChoice::kAuto;
    const std::string schema = t.call_schema();
    const std::string key = std::string("t:") + (forced ? "f" : "a") + (t.parallel ? "p" : "1") +
                            (t.strict() ? "s:" : "l:") + schema;
    CompiledFormat f = compile_cached(
        key,
        [&] {
          StructuralTagFormat tf;
          tf.begin = std::string(kToolCallBegin);
          tf.end = std::string(kToolCallEnd);
          tf.content = compile_schema(schema, t.strict(), cancel, "tools");
          tf.text_before = !forced;
          tf.min_segments = forced ? 1 : 0;
          tf.max_segments = t.parallel ? StructuralTagFormat::kUnlimited : 1;
          return CompiledFormat{tf.content, StructuralTagGrammar::build(index_, std::move(tf)),
                                nullptr, nullptr};
        },
        cancel);
    return std::make_unique<StructuralTagConstraint>(f.tags);
  }
  switch (r.format) {
    case ResponseFormat::kText:
      return nullptr;
    case ResponseFormat::kJsonObject:
    case ResponseFormat::kJsonSchema:
      return std::make_unique<JsonConstraint>(grammar(r, cancel));
    default:
      return std::make_unique<GrammarConstraint>(text_grammar(r, cancel));
  }
  return nullptr;
}

std::shared_ptr<Job> ServeEngine::prepare(const ApiRequest& r,
                                          const std::atomic<bool>* cancel) const {
  if (!serves(r.model)) {
    throw ApiError(
        404, "invalid_request_error",
        "The model '" + r.model + "' does not exist; this server serves '" + model_id_ + "'.",
        "model", "model_not_found");
  }
  auto job = std::make_shared<Job>();
  job->stream = r.stream;
  std::string rendered;
  try {
    job->prompt = prompt_ids(r, rendered);
  } catch (const Error& e) {
    throw ApiError::from(e);
  }
  if (job->prompt.empty()) throw ApiError::bad_param("prompt", "the prompt encodes to no tokens.");

  const std::size_t n_prompt = job->prompt.size();
  const std::size_t margin = r.speculative ? r.max_draft : 0;
  auto too_long = [&](std::size_t completion) {
    return ApiError(400, "invalid_request_error",
                    "This model's maximum context length is " + std::to_string(context_) +
                        " tokens. However, you requested " + std::to_string(n_prompt + completion) +
                        " tokens (" + std::to_string(n_prompt) + " in the prompt, " +
                        std::to_string(completion) +
                        " in the completion). Please reduce the "
                        "length of the prompt or the completion.",
                    r.endpoint == Endpoint::kChat ? "messages" : "prompt",
                    "context_length_exceeded");
  };
  if (n_prompt + 1 + margin > context_) throw too_long(1);
  GenerateOptions& o = job->options;
  if (r.max_tokens) {
    if (n_prompt + *r.max_tokens + margin > context_) throw too_long(*r.max_tokens);
    o.max_tokens = *r.max_tokens;
  } else {
    o.max_tokens = static_cast<std::uint32_t>(
        std::min<std::size_t>(options_.default_max_tokens, context_ - n_prompt - margin));
  }

  // The request's generation, built as the CLI builds its flags.
  GenerationSpec spec;
  spec.sampler = r.sampler;
  spec.penalties = r.penalties;
  spec.max_tokens = o.max_tokens;
  spec.stop = r.stop;
  spec.thinking_budget = r.thinking_budget;
  if (r.speculative) spec.speculation = Speculation::kNgram;
  spec.max_draft = r.max_draft;
  try {
    GenerationPlan plan = GenerationPlan::build(spec, vocab(), rendered, nullptr);
    o = std::move(plan.options);
    job->drafter = std::move(plan.drafter);
  } catch (const Error& e) {
    throw ApiError::from(e);
  }
  job->constraint = constraint_for(r, cancel);  // after the cheap checks
  o.constraint = job->constraint.get();
  return job;
}

void ServeEngine::submit(std::shared_ptr<Job> job) {
  loop_->submit(std::move(job));
}

EngineStats ServeEngine::stats() const {
  EngineStats s;
  static_cast<LoopStats&>(s) = loop_->stats();
  std::lock_guard lock(cache_mu_);
  s.compiling = compiling_;
  return s;
}

}  // namespace nextok::server
