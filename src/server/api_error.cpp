#include "api_error.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <new>
#include <random>

namespace nextok::server {

ApiError ApiError::from(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kIo:
    case ErrorCode::kMalformedFile:
    case ErrorCode::kNanLogits:
    case ErrorCode::kNonFiniteLogits:
      return {500, "server_error", e.what(), e.param(), error_code_name(e.code())};
    case ErrorCode::kUnsupported:
      return {400, "invalid_request_error", e.what(), e.param(), "unsupported"};
    default:
      return {400, "invalid_request_error", e.what(), e.param(), error_code_name(e.code())};
  }
}

nlohmann::json ApiError::to_json() const {
  auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  return {{"error",
           {{"message", what()}, {"type", type_}, {"param", opt(param_)}, {"code", opt(code_)}}}};
}

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiError ApiError::from_exception(std::exception_ptr ep) {
  try {
    std::rethrow_exception(ep);
  } catch (const ApiError& e) {
    return e;
  } catch (const Error& e) {
    return ApiError::from(e);
  } catch (const nlohmann::json::exception& e) {
    return ApiError(400, "invalid_request_error",
                    std::string("the request's JSON could not be used: ") + e.what(), {},
                    "invalid_json");
  } catch (const std::bad_alloc&) {
    return ApiError(413, "invalid_request_error",
                    "the request needs more memory than the server can give it; make the "
                    "prompt, schema or body smaller",
                    {}, "request_too_large");
  } catch (const std::logic_error& e) {  // length_error, out_of_range, invalid_argument
    return ApiError(400, "invalid_request_error",
                    std::string("the request could not be processed: ") + e.what(), {},
                    "invalid_request");
  } catch (const std::exception& e) {
    return ApiError(500, "server_error", e.what());
  } catch (...) {
    return ApiError(500, "server_error", "internal error");
  }
}

std::string random_id(const char* prefix, char separator) {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t base = std::random_device{}() * 0x9E3779B97F4A7C15ull;
  char buf[64];
  std::snprintf(
      buf, sizeof buf, "%s%c%016llx", prefix, separator,
      static_cast<unsigned long long>(base ^ (counter.fetch_add(1) * 0xBF58476D1CE4E5B9ull)));
  return buf;
}

}  // namespace nextok::server
