// `nextok serve`: the OpenAI-compatible server (docs/server.md). Prints one
// line, "nextok serve: listening on http://HOST:PORT", once it accepts
// connections; scripts wait for it.
#include <cstdio>

#include "commands.hpp"
#include "default_model.hpp"
#include "server/http_server.hpp"

namespace nextok::tools {

std::function<int()> add_serve(CLI::App& app) {
  auto o = std::make_shared<server::ServerOptions>();
  auto model = std::make_shared<std::string>("default");
  CLI::App* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server");
  cmd->add_option("--model", *model,
                  "default (SmolLM2-135M-Instruct, fetched once) or a GGUF path");
  cmd->add_option("--model-id", o->engine.model_id,
                  "Name in /v1/models (default: the file's stem)");
  cmd->add_option("--host", o->host, "Address to bind (loopback by default)");
  cmd->add_option("--port", o->port, "Port (0 = any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--threads", o->engine.threads, "Model threads (0 = every core)");
  cmd->add_option("--ctx", o->engine.max_context, "Context length (0 = the model's)");
  cmd->add_option("--max-tokens", o->engine.default_max_tokens,
                  "Completion length when a request gives none")
      ->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--max-queue", o->engine.max_queue, "Waiting requests before a 503");
  cmd->add_option("--parallel", o->engine.parallel,
                  "Requests decoded together (continuous batching)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--prefill-chunk", o->engine.prefill_chunk,
                  "Prompt tokens a request reads per step of the loop (long prompts interleave)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-body", o->max_body_bytes, "Largest request body in bytes (else 413)");
  cmd->add_option("--http-threads", o->http_threads, "Connections served at once");
  return [o, model, cmd]() {
    if (!cmd->parsed()) return -1;
    FetchOptions fetch;
    fetch.python = default_python();
    fetch.progress = [](std::string_view msg) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(msg.size()), msg.data());
    };
    o->engine.model_path = resolve_model(*model, fetch);
    return server::serve(*o, [&](int port) {
      std::printf("nextok serve: listening on http://%s:%d\n", o->host.c_str(), port);
      std::fflush(stdout);
    });
  };
}

}  // namespace nextok::tools
