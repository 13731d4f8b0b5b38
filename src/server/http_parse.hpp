// Strict HTTP/1.1 request heads: the request line and headers of one
// request, parsed from a buffer before any of its body is read. Anything
// ambiguous (two Content-Length headers, a length that is not a plain decimal,
// folded header lines, Transfer-Encoding on a request) is refused here, so no
// body is ever read on a guess.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextok::server {

struct HttpRequest {
  std::string method, target, path, query, version;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::size_t content_length = 0;
  bool keep_alive = true;
  bool expect_continue = false;
  std::string body;
  std::string peer;  // the client's address

  // The first header of that (lower-case) name.
  const std::string* header(std::string_view name) const;
};

// Why a head was refused: the status to answer and a message for the client.
struct HeadError {
  int status = 400;
  std::string message;
};

struct HeadLimits {
  std::size_t max_head_bytes = 32u << 10;  // request line + headers
  std::size_t max_body_bytes = 8u << 20;
};

// The outcome of looking at the start of a connection's buffer.
struct HeadResult {
  enum class Kind { kIncomplete, kOk, kError } kind = Kind::kIncomplete;
  HttpRequest request;       // kOk: everything but the body
  std::size_t head_len = 0;  // kOk: bytes of the head, CRLFCRLF included
  HeadError error;           // kError
};

// Parses the head at the start of `buf`. kIncomplete until the blank line
// arrives (or an error when the head outgrows the limit: 431).
HeadResult parse_head(std::string_view buf, const HeadLimits& limits);

// A Content-Length value: 1*DIGIT and nothing else. nullopt for anything
// else; SIZE_MAX for a valid number too large for size_t.
std::optional<std::size_t> parse_content_length(std::string_view value);

// The reason phrase of a status code ("OK", "Bad Request", ...).
const char* status_reason(int status);

// %XX decoding of a path (plus signs are kept: they only mean space in queries).
std::string percent_decode(std::string_view s);

}  // namespace nextok::server
