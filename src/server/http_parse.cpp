#include "http_parse.hpp"

#include <cstdint>
#include <limits>

namespace nextok::server {

namespace {

// RFC 9110 token characters (method and header names).
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether a comma-separated header value lists `token` (case-insensitive).
bool lists(std::string_view value, std::string_view token) {
  const std::string v = lower(value);
  std::string_view rest = v;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    if (trim(rest.substr(0, comma)) == token) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

HeadResult fail(int status, std::string message) {
  HeadResult r;
  r.kind = HeadResult::Kind::kError;
  r.error = {status, std::move(message)};
  return r;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

std::optional<std::size_t> parse_content_length(std::string_view value) {
  if (value.empty()) return std::nullopt;
  std::size_t n = 0;
  bool overflow = false;
  for (const char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::size_t>(c - '0');
    if (n > (std::numeric_limits<std::size_t>::max() - d) / 10) overflow = true;
    if (!overflow) n = n * 10 + d;
  }
  return overflow ? std::numeric_limits<std::size_t>::max() : n;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

HeadResult parse_head(std::string_view buf, const HeadLimits& limits) {
  const std::size_t end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (buf.size() > limits.max_head_bytes)
      return fail(431, "the request head is larger than " + std::to_string(limits.max_head_bytes) +
                           " bytes");
    return {};
  }
  if (end + 4 > limits.max_head_bytes)
    return fail(
        431, "the request head is larger than " + std::to_string(limits.max_head_bytes) + " bytes");
  const std::string_view head = buf.substr(0, end);
  HeadResult r;
  HttpRequest& q = r.request;

  // Request line: METHOD SP target SP HTTP/1.x
  const std::size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos || sp1 == 0 || sp2 == sp1 + 1)
    return fail(400, "malformed request line");
  q.method = line.substr(0, sp1);
  q.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  q.version = line.substr(sp2 + 1);
  for (const char c : q.method)
    if (!is_tchar(c)) return fail(400, "malformed request method");
  if (q.target.front() != '/') return fail(400, "the request target must be an absolute path");
  for (const char c : q.target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return fail(400, "control characters in the request target");
  if (q.version == "HTTP/1.0") {
    q.keep_alive = false;
  } else if (q.version != "HTTP/1.1") {
    return fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  }
  const std::size_t qm = q.target.find('?');
  q.path = percent_decode(std::string_view(q.target).substr(0, qm));
  if (qm != std::string::npos) q.query = q.target.substr(qm + 1);

  // Header lines: name ":" OWS value OWS; no folding, no bare CR or NUL.
  std::string_view rest = eol == std::string_view::npos ? std::string_view{} : head.substr(eol + 2);
  int n_length = 0;
  std::optional<std::size_t> length;
  while (!rest.empty()) {
    const std::size_t e = rest.find("\r\n");
    const std::string_view h = rest.substr(0, e);
    rest = e == std::string_view::npos ? std::string_view{} : rest.substr(e + 2);
    if (h.front() == ' ' || h.front() == '\t')
      return fail(400, "folded header lines are not accepted");
    const std::size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(400, "malformed header line");
    for (std::size_t i = 0; i < colon; ++i)
      if (!is_tchar(h[i])) return fail(400, "malformed header name");
    const std::string_view value = trim(h.substr(colon + 1));
    for (const char c : value)
      if (c == '\r' || c == '\n' || c == '\0') return fail(400, "control characters in a header");
    std::string name = lower(h.substr(0, colon));
    if (name == "content-length") {
      ++n_length;
      length = parse_content_length(value);
      if (!length)
        return fail(400, "Content-Length must be a non-negative decimal integer, not '" +
                             std::string(value.substr(0, 64)) + "'");
    } else if (name == "transfer-encoding") {
      return fail(501, "Transfer-Encoding request bodies are not accepted; send Content-Length");
    } else if (name == "connection") {
      if (lists(value, "close")) q.keep_alive = false;
      if (lists(value, "keep-alive") && q.version == "HTTP/1.0") q.keep_alive = true;
    } else if (name == "expect") {
      if (lower(value) != "100-continue") return fail(417, "only Expect: 100-continue is known");
      q.expect_continue = true;
    }
    q.headers.emplace_back(std::move(name), std::string(value));
  }
  if (n_length > 1) return fail(400, "more than one Content-Length header");
  if (length) {
    if (*length > limits.max_body_bytes)
      return fail(413, "the request body is larger than " + std::to_string(limits.max_body_bytes) +
                           " bytes");
    q.content_length = *length;
  } else if (q.method == "POST" || q.method == "PUT" || q.method == "PATCH") {
    return fail(411, "a request body needs a Content-Length header");
  }
  r.kind = HeadResult::Kind::kOk;
  r.head_len = end + 4;
  return r;
}

const char* status_reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 500 ? "Client Error" : "Server Error";
  }
}

}  // namespace nextok::server
