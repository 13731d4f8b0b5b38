// The model behind the server: turns a validated request into a Job (prompt
// ids, decode options, constraint) on the caller's thread, and runs up to
// `parallel` jobs at once, first come first served, on the StepLoop.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "background_pool.hpp"
#include "job.hpp"
#include "nextok/chat.hpp"
#include "nextok/grammar.hpp"
#include "nextok/json_or_text.hpp"
#include "nextok/llama.hpp"
#include "nextok/structural_tag.hpp"
#include "request.hpp"
#include "step_loop.hpp"

namespace nextok::server {

struct EngineOptions {
  std::filesystem::path model_path;
  std::string model_id;  // empty: the file's stem
  // A Jinja chat template to use instead of the model's (recognised like the
  // model's own, docs/chat.md); empty: the model's.
  std::filesystem::path chat_template_file;
  unsigned threads = 0;           // model threads; 0 = every core
  std::uint32_t max_context = 0;  // 0 = the model's
  std::uint32_t default_max_tokens = 2048;
  std::size_t max_queue = 256;          // waiting jobs; more is a 503
  std::size_t grammar_cache = 32;       // compiled schemas kept
  std::size_t parallel = 8;             // generations decoded together (batched)
  std::size_t prefill_chunk = 256;      // prompt tokens per request per loop iteration
  std::uint32_t max_compile_ms = 1000;  // one schema's compile budget; past it, a 400
  // Memory one compile may hold (ConstraintLimits::max_compile_bytes): with
  // compile_slots compiles at once, the server's compile peak is their product.
  std::size_t max_compile_bytes = std::size_t{128} << 20;
  std::size_t compile_slots = 2;  // low-priority threads for compiles and big parses
};

struct EngineStats : LoopStats {
  std::size_t compiling = 0;  // schema compiles in progress
};

class ServeEngine {
 public:
  explicit ServeEngine(const EngineOptions& options);
  ~ServeEngine();

  const std::string& model_id() const noexcept { return model_id_; }
  const std::string& fingerprint() const noexcept { return fingerprint_; }
  std::uint32_t context_length() const noexcept { return context_; }
  const Vocabulary& vocab() const noexcept { return model_->tokenizer().vocab(); }
  // How the chat template writes tool calls (Hermes tags or Llama 3.1 JSON).
  ToolFormat tool_format() const noexcept;
  // Whether a request's "model" names this one (empty and "default" do).
  bool serves(const std::string& model) const;

  // Throws ApiError: 404 for another model, 400 for a request the model
  // cannot serve (context, unknown ids, schemas, budgets). `cancel`, when
  // set (the client left), stops a schema compile or the wait for one.
  std::shared_ptr<Job> prepare(const ApiRequest& request,
                               const std::atomic<bool>* cancel = nullptr) const;
  // Throws ApiError 503 when the queue is full.
  void submit(std::shared_ptr<Job> job);
  EngineStats stats() const;
  // Low-priority threads for CPU-heavy request work (schemas, big bodies).
  BackgroundPool& background() const { return *background_; }
  // Refuses new work, fails queued jobs with a 503 and cancels the running
  // one, so a stop does not wait for every client.
  void shutdown();

 private:
  std::vector<std::int32_t> prompt_ids(const ApiRequest& r, std::string& rendered) const;
  // A compiled output format: a JSON grammar, and for tool calls the
  // structural tag around it or (Llama 3.1, auto) the text-or-call choice;
  // or a regex, choice, GBNF or Lark grammar.
  struct CompiledFormat {
    std::shared_ptr<const JsonGrammar> json;
    std::shared_ptr<const StructuralTagGrammar> tags;
    std::shared_ptr<const JsonOrTextGrammar> either;
    std::shared_ptr<const Grammar> grammar;
  };
  std::unique_ptr<ConstraintEngine> constraint_for(const ApiRequest& r,
                                                   const std::atomic<bool>* cancel) const;
  // Compiles on the background threads, once per key (LRU cache).
  CompiledFormat compile_cached(const std::string& key,
                                const std::function<CompiledFormat()>& build,
                                const std::atomic<bool>* cancel) const;
  std::shared_ptr<const JsonGrammar> grammar(const ApiRequest& r,
                                             const std::atomic<bool>* cancel) const;
  std::shared_ptr<const Grammar> text_grammar(const ApiRequest& r,
                                              const std::atomic<bool>* cancel) const;
  std::optional<CompiledFormat> cached(const std::string& key) const;
  std::shared_ptr<const JsonGrammar> compile_schema(const std::string& schema, bool strict,
                                                    const std::atomic<bool>* cancel,
                                                    const char* param) const;

  EngineOptions options_;
  std::unique_ptr<LlamaModel> model_;
  std::optional<ChatTemplate> template_;
  std::shared_ptr<const TokenIndex> index_;
  std::shared_ptr<const JsonGrammar> any_object_;
  std::string model_id_, fingerprint_;
  std::uint32_t context_ = 0;

  // Compiled schemas, most recent first.
  mutable std::mutex cache_mu_;
  mutable std::list<std::pair<std::string, CompiledFormat>> lru_;
  mutable std::unordered_map<std::string, decltype(lru_)::iterator> cache_;
  mutable std::size_t compiling_ = 0;  // guarded by cache_mu_
  std::unique_ptr<BackgroundPool> background_;

  std::unique_ptr<StepLoop> loop_;
};

}  // namespace nextok::server
