#include "http_server.hpp"

#include <httplib.h>
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "nextok/error.hpp"
#include "nextok/version.hpp"
#include "openai_format.hpp"

namespace nextok::server {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kJson = "application/json";

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status();
  res.set_content(dump_json(e.to_json()), kJson);
}

// Fills in an OpenAI-style body for statuses httplib answers itself.
void on_http_error(const httplib::Request& req, httplib::Response& res, std::size_t max_body) {
  if (!res.body.empty()) return;
  switch (res.status) {
    case 404:
      send_error(res,
                 ApiError(404, "invalid_request_error",
                          "Invalid URL (" + req.method + " " + req.path + ")", {}, "not_found"));
      break;
    case 413:
      send_error(res,
                 ApiError(413, "invalid_request_error",
                          "the request body is larger than " + std::to_string(max_body) + " bytes",
                          {}, "request_too_large"));
      break;
    default:
      send_error(res,
                 ApiError(res.status, res.status >= 500 ? "server_error" : "invalid_request_error",
                          "HTTP " + std::to_string(res.status), {}, {}));
  }
}

bool write_sse(httplib::DataSink& sink, const json& j) {
  const std::string line = "data: " + dump_json(j) + "\n\n";
  return sink.write(line.data(), line.size());
}

bool write_raw(httplib::DataSink& sink, std::string_view text) {
  return sink.write(text.data(), text.size());
}

struct StreamState {
  std::shared_ptr<Job> job;
  ResponseMeta meta;
  ChunkWriter writer;
  bool opened = false;
  StreamState(std::shared_ptr<Job> j, ResponseMeta m, const Vocabulary& vocab)
      : job(std::move(j)), meta(std::move(m)), writer(meta, vocab) {}
};

// Streams one job as server-sent events. Each call writes what is ready;
// a failed write (client gone) cancels the job.
bool stream_step(StreamState& s, httplib::DataSink& sink) {
  auto fail = [&] {
    s.job->cancel();
    return false;
  };
  if (!s.opened) {
    s.opened = true;
    if (auto first = s.writer.opening(); first && !write_sse(sink, *first)) return fail();
  }
  JobEvent ev;
  for (int i = 0; i < 64; ++i) {
    switch (s.job->next(ev, 1000ms)) {
      case Job::Wait::kTimeout:
        // A comment line: keeps proxies patient and finds closed connections
        // while the job waits in the queue.
        return write_raw(sink, ": keep-alive\n\n") ? true : fail();
      case Job::Wait::kEvent:
        if (auto c = s.writer.token(ev); c && !write_sse(sink, *c)) return fail();
        continue;
      case Job::Wait::kDone: {
        const Job& job = *s.job;
        if (job.error) {
          if (!write_sse(sink, job.error->to_json())) return fail();
        } else {
          if (!write_sse(sink, s.writer.closing(job.result.finish))) return fail();
          if (s.meta.include_usage &&
              !write_sse(sink, s.writer.usage(job.prompt.size(), job.result.tokens.size())))
            return fail();
        }
        if (!write_raw(sink, "data: [DONE]\n\n")) return fail();
        sink.done();
        return true;
      }
    }
  }
  return true;
}

void handle_generation(ServeEngine& engine, Endpoint endpoint, const httplib::Request& req,
                       httplib::Response& res) {
  const ApiRequest r = parse_request(req.body, endpoint);
  std::shared_ptr<Job> job = engine.prepare(r);
  ResponseMeta meta = ResponseMeta::make(r, engine.model_id(), engine.fingerprint());
  engine.submit(job);
  if (!r.stream) {
    job->wait_done();
    if (job->error) return send_error(res, *job->error);
    res.set_content(dump_json(response_json(meta, *job, engine.vocab())), kJson);
    return;
  }
  auto state = std::make_shared<StreamState>(job, std::move(meta), engine.vocab());
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [state](std::size_t, httplib::DataSink& sink) { return stream_step(*state, sink); },
      [state](bool success) {
        if (!success) state->job->cancel();
      });
}

json model_json(const ServeEngine& engine, std::int64_t created) {
  return {{"id", engine.model_id()},
          {"object", "model"},
          {"created", created},
          {"owned_by", "nextok"},
          {"context_length", engine.context_length()}};
}

// Runs `handler`, mapping every error to an OpenAI error body.
template <class F>
void guarded(httplib::Response& res, F&& handler) {
  try {
    handler();
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const Error& e) {
    send_error(res, ApiError::from(e));
  } catch (const std::bad_alloc&) {
    send_error(res, ApiError(500, "server_error", "out of memory"));
  } catch (const std::exception& e) {
    send_error(res, ApiError(500, "server_error", e.what()));
  }
}

}  // namespace

int serve(const ServerOptions& options, const std::function<void(int)>& on_listening) {
  // Signals go to one waiting thread, so every other thread may block safely.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  ServeEngine engine(options.engine);
  const auto started = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  httplib::Server svr;
  const unsigned n_threads = options.http_threads ? options.http_threads : 8;
  svr.new_task_queue = [n_threads] { return new httplib::ThreadPool(n_threads); };
  svr.set_payload_max_length(options.max_body_bytes);
  svr.set_read_timeout(30, 0);
  svr.set_write_timeout(30, 0);
  const std::size_t max_body = options.max_body_bytes;
  svr.set_error_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    on_http_error(req, res, max_body);
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send_error(res, ApiError(500, "server_error", "internal error"));
      });

  svr.Get("/health", [&](const httplib::Request&, httplib::Response& res) {
    const EngineStats s = engine.stats();
    res.set_content(dump_json({{"status", "ok"},
                               {"model", engine.model_id()},
                               {"version", kVersion},
                               {"queued", s.queued},
                               {"running", s.running},
                               {"served", s.served},
                               {"batching",
                                {{"batches", s.batching.batches},
                                 {"batched_tokens", s.batching.batched_tokens},
                                 {"largest_batch", s.batching.largest},
                                 {"other_steps", s.batching.other_steps},
                                 {"prefill_chunks", s.batching.prefill_chunks}}}}),
                    kJson);
  });
  svr.Get("/v1/models", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        dump_json({{"object", "list"}, {"data", json::array({model_json(engine, started)})}}),
        kJson);
  });
  svr.Get(R"(/v1/models/(.+))", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!engine.serves(id) || id.empty()) {
      return send_error(
          res, ApiError(404, "invalid_request_error", "The model '" + id + "' does not exist",
                        "model", "model_not_found"));
    }
    res.set_content(dump_json(model_json(engine, started)), kJson);
  });
  svr.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { handle_generation(engine, Endpoint::kChat, req, res); });
  });
  svr.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { handle_generation(engine, Endpoint::kCompletion, req, res); });
  });

  const int port = options.port == 0
                       ? svr.bind_to_any_port(options.host)
                       : (svr.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    throw Error(ErrorCode::kIo, "port",
                "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                    " (in use, or not an address of this machine)");
  }
  std::atomic<bool> signalled{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    signalled = true;
    engine.shutdown();
    svr.stop();
  });
  on_listening(port);
  svr.listen_after_bind();
  // listen returned on its own (not by a signal): release the waiting thread.
  if (!signalled) pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return 0;
}

}  // namespace nextok::server
