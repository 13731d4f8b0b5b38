// `nextok serve`: the OpenAI-compatible HTTP front end over a ServeEngine.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "serve_engine.hpp"

namespace nextok::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::size_t max_body_bytes = 8u << 20;
  unsigned http_threads = 128;                      // requests handled at once; streams mostly wait
  std::chrono::milliseconds header_timeout{10000};  // whole head, from accept or the last answer
  std::chrono::milliseconds body_timeout{30000};    // whole body, after the head
  std::size_t max_connections = 512;
  std::size_t max_connections_per_peer = 64;
  EngineOptions engine;
};

// Loads the model, binds, calls on_listening(port) and serves until SIGINT or
// SIGTERM. Returns the process exit code. Throws nextok::Error when the model
// cannot be loaded, and kIo when the address cannot be bound.
int serve(const ServerOptions& options, const std::function<void(int)>& on_listening);

}  // namespace nextok::server
