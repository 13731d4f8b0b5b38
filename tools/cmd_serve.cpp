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
  cmd->add_option("--chat-template-file", o->engine.chat_template_file,
                  "A Jinja chat template to use instead of the model's (a supported family, "
                  "docs/chat.md)")
      ->check(CLI::ExistingFile);
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
                  "Prompt tokens long prompts read per step of the loop, shared (they interleave)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-body", o->max_body_bytes, "Largest request body in bytes (else 413)");
  cmd->add_option("--http-threads", o->http_threads,
                  "Requests handled at once (worker threads; heads are read by one poll thread)");
  cmd->add_option("--max-connections", o->max_connections,
                  "Open client connections (16 more are kept for /health)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--max-connections-per-peer", o->max_connections_per_peer,
                  "Open connections from one client address")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  auto header_s = std::make_shared<double>(10.0);
  auto body_s = std::make_shared<double>(30.0);
  cmd->add_option("--header-timeout", *header_s,
                  "Seconds for a request's whole head (also the keep-alive idle time)")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--body-timeout", *body_s, "Seconds for a request's whole body")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--max-compile-ms", o->engine.max_compile_ms,
                  "Budget for compiling one JSON schema (past it, a 400 naming it)")
      ->check(CLI::Range(1u, 600000u));
  auto compile_mib = std::make_shared<std::size_t>(o->engine.max_compile_bytes >> 20);
  cmd->add_option("--max-compile-mb", *compile_mib,
                  "Memory one schema compile may hold, in MiB (past it, a 400 naming it)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  return [o, model, cmd, header_s, body_s, compile_mib]() {
    if (!cmd->parsed()) return -1;
    o->engine.max_compile_bytes = *compile_mib << 20;
    auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long>(s * 1000.0)); };
    o->header_timeout = ms(*header_s);
    o->body_timeout = ms(*body_s);
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
