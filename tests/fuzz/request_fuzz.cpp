// The OpenAI request parser on arbitrary bodies: every input either parses or
// raises an ApiError with a 4xx status; nothing else escapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/api_error.hpp"
#include "server/request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (auto endpoint : {nextok::server::Endpoint::kChat, nextok::server::Endpoint::kCompletion}) {
    try {
      (void)nextok::server::parse_request(body, endpoint);
    } catch (const nextok::server::ApiError& e) {
      if (e.status() < 400 || e.status() >= 500) std::abort();
      (void)nextok::server::dump_json(e.to_json());
    }
  }
  return 0;
}
