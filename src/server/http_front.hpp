// The server's HTTP/1.1 front: one poll() thread owns every socket while a
// request's head and body arrive (each under a total deadline, so a client
// sending a byte every few seconds costs a buffer, not a thread), answers
// cheap routes (/health) itself, and hands complete requests to a pool of
// worker threads. While a worker owns a request, the poll thread watches
// its socket for a hang-up and fires the request's cancel callback.
// Connections are capped in total and per peer, with a few kept in reserve
// for cheap routes, so /health answers while the caps are reached.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http_parse.hpp"

namespace nextok::server {

struct FrontOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  HeadLimits limits;
  std::chrono::milliseconds header_timeout{10000};  // accept (or the last response) → blank line
  std::chrono::milliseconds body_timeout{30000};    // blank line → last body byte
  std::chrono::milliseconds write_timeout{30000};   // one blocked write
  std::size_t max_connections = 512;
  std::size_t max_per_peer = 64;
  std::size_t reserve = 16;  // past the caps, for cheap routes only
  // Request bytes buffered across all connections; past it, bodies wait
  // (and time out) instead of growing memory (512 x 8 MiB bodies).
  std::size_t max_buffered_bytes = 256u << 20;
  std::size_t max_requests_per_connection = 1000;
  unsigned workers = 128;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct FrontStats {
  std::size_t open = 0;         // client connections now
  std::size_t refused = 0;      // closed at accept: over every cap
  std::size_t timed_out = 0;    // head or body past its deadline
  std::size_t waited = 0;       // requests past the caps that went ahead after a wait
  std::size_t turned_away = 0;  // requests past the caps that heard 503 after the wait
  std::size_t disconnects = 0;  // clients that left while a worker had their request
};

struct Conn;
class HttpFront;

// One request on a worker thread and the way back to its client.
class Exchange {
 public:
  Exchange(HttpFront& front, std::shared_ptr<Conn> conn, HttpRequest request);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  const HttpRequest& request() const noexcept { return request_; }
  // A whole response. False when the client is gone.
  bool respond(const HttpResponse& response);
  // A chunked response (HTTP/1.0: raw, then close).
  bool begin_stream(int status, std::string_view content_type,
                    const std::vector<std::pair<std::string, std::string>>& headers);
  bool write_chunk(std::string_view data);
  bool end_stream();
  bool started() const noexcept { return started_; }
  // The client hung up (seen by the poll thread, or by a failed write).
  bool gone() const noexcept;
  const std::atomic<bool>& gone_flag() const noexcept;
  // Runs `f` once when the client hangs up (now, if it already has), on the
  // poll thread; replaces the previous callback.
  void on_gone(std::function<void()> f);

 private:
  bool send_all(std::string_view data);
  std::string head(int status, std::string_view content_type, const std::string* length,
                   const std::vector<std::pair<std::string, std::string>>& headers, bool chunked);

  HttpFront& front_;
  std::shared_ptr<Conn> conn_;
  HttpRequest request_;
  bool keep_ = false;  // the connection may serve another request
  bool started_ = false, chunked_ = false, ok_ = true;
};

struct Routes {
  // Answered on the poll thread; must be quick and never block. nullopt:
  // not a quick route.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> quick;
  // Everything else, on a worker thread.
  std::function<void(Exchange&)> slow;
  // The response for a refused head (status and message from the parser).
  std::function<HttpResponse(const HeadError&)> error;
};

class HttpFront {
 public:
  HttpFront(FrontOptions options, Routes routes);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds and listens; returns the port. Throws nextok::Error (kIo).
  int bind();
  // Serves until stop(); then waits for the workers.
  void run();
  // Thread-safe; wakes run().
  void stop();
  FrontStats stats() const;

  struct Impl;

 private:
  friend class Exchange;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nextok::server
