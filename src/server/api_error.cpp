#include "api_error.hpp"

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

}  // namespace nextok::server
