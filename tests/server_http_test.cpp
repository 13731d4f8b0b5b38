// The HTTP layer's request heads: exactly one Content-Length, a plain
// non-negative decimal, checked before any body is read; anything
// ambiguous is refused with the status a client can act on.
#include <gtest/gtest.h>

#include <string>

#include "server/http_parse.hpp"

namespace nextok::server {
namespace {

HeadResult head(const std::string& headers, std::size_t max_body = 1000) {
  HeadLimits limits;
  limits.max_body_bytes = max_body;
  return parse_head("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n", limits);
}

int status_of(const std::string& headers) {
  const HeadResult r = head(headers);
  return r.kind == HeadResult::Kind::kError ? r.error.status : 0;
}

TEST(ServerHttp, ContentLengthIsOneDecimalNumber) {
  const HeadResult ok = head("Content-Length: 12\r\n");
  ASSERT_EQ(ok.kind, HeadResult::Kind::kOk);
  EXPECT_EQ(ok.request.content_length, 12u);
  EXPECT_EQ(ok.request.path, "/v1/chat/completions");
  EXPECT_TRUE(ok.request.keep_alive);
  for (const char* bad : {"-1", "1e30", "abc", "", "+5", "0x10", "5 5", "5,5", "1.0"})
    EXPECT_EQ(status_of("Content-Length: " + std::string(bad) + "\r\n"), 400) << bad;
  EXPECT_EQ(status_of("Content-Length: 5\r\nContent-Length: 5\r\n"), 400);
  EXPECT_EQ(status_of("Content-Length: 5\r\nContent-Length: 6\r\n"), 400);
}

TEST(ServerHttp, TooLargeIsRefusedFromTheHeadAlone) {
  EXPECT_EQ(status_of("Content-Length: 1001\r\n"), 413);
  EXPECT_EQ(status_of("Content-Length: 99999999999999999999999999999999\r\n"), 413);
  EXPECT_EQ(status_of("Content-Length: 1000\r\n"), 0);
}

TEST(ServerHttp, AmbiguousFramingIsRefused) {
  EXPECT_EQ(status_of(""), 411);  // a POST without a length
  EXPECT_EQ(status_of("Transfer-Encoding: chunked\r\n"), 501);
  EXPECT_EQ(status_of("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), 501);
  EXPECT_EQ(status_of("Content-Length: 5\r\n folded\r\n"), 400);
  EXPECT_EQ(status_of("Bad Name: 1\r\nContent-Length: 5\r\n"), 400);
  EXPECT_EQ(status_of("NoColon\r\nContent-Length: 5\r\n"), 400);
  EXPECT_EQ(status_of("Content-Length: 5\r\nExpect: something\r\n"), 417);
}

TEST(ServerHttp, RequestLineAndVersion) {
  HeadLimits l;
  auto st = [&](const std::string& line) {
    const HeadResult r = parse_head(line + "\r\n\r\n", l);
    return r.kind == HeadResult::Kind::kError ? r.error.status : 0;
  };
  EXPECT_EQ(st("GET /health HTTP/1.1"), 0);
  EXPECT_EQ(st("GET /health HTTP/2.0"), 505);
  EXPECT_EQ(st("GET  /health HTTP/1.1"), 400);
  EXPECT_EQ(st("GET health HTTP/1.1"), 400);
  EXPECT_EQ(st("GET /health"), 400);
  const HeadResult r = parse_head("GET /v1/models/a%20b?x=1 HTTP/1.0\r\n\r\n", l);
  ASSERT_EQ(r.kind, HeadResult::Kind::kOk);
  EXPECT_EQ(r.request.path, "/v1/models/a b");
  EXPECT_EQ(r.request.query, "x=1");
  EXPECT_FALSE(r.request.keep_alive);  // HTTP/1.0 closes unless asked
}

TEST(ServerHttp, HeadIsIncompleteUntilTheBlankLineAndBounded) {
  HeadLimits l;
  l.max_head_bytes = 64;
  EXPECT_EQ(parse_head("GET /health HTTP/1.1\r\nHost: x\r\n", l).kind,
            HeadResult::Kind::kIncomplete);
  const HeadResult big = parse_head("GET /health HTTP/1.1\r\nX: " + std::string(100, 'a'), l);
  ASSERT_EQ(big.kind, HeadResult::Kind::kError);
  EXPECT_EQ(big.error.status, 431);
}

TEST(ServerHttp, PipelinedHeadsAreParsedOneAtATime) {
  const std::string two = "GET /health HTTP/1.1\r\n\r\nGET /v1/models HTTP/1.1\r\n\r\n";
  const HeadResult a = parse_head(two, {});
  ASSERT_EQ(a.kind, HeadResult::Kind::kOk);
  EXPECT_EQ(a.request.path, "/health");
  const HeadResult b = parse_head(std::string_view(two).substr(a.head_len), {});
  ASSERT_EQ(b.kind, HeadResult::Kind::kOk);
  EXPECT_EQ(b.request.path, "/v1/models");
  EXPECT_EQ(parse_content_length("18446744073709551616"), SIZE_MAX);
  EXPECT_EQ(parse_content_length("007"), 7u);
}

}  // namespace
}  // namespace nextok::server
