// OpenAI-style API errors: {"error": {"message", "type", "param", "code"}}
// with the HTTP status a client expects.
#pragma once
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "nextok/error.hpp"

namespace nextok::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = {},
           std::string code = {})
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(std::move(code)) {}

  // 400 invalid_request_error naming the parameter.
  static ApiError bad_param(const std::string& param, const std::string& message,
                            std::string code = {}) {
    return {400, "invalid_request_error", message, param, std::move(code)};
  }
  // A library error from request input: 400 (500 for I/O and file errors).
  static ApiError from(const Error& e);
  // Whatever a request's handling threw. Input causes nearly all of it, so
  // it is a 4xx (JSON access, length and range errors, out of memory: 413);
  // 500 is left for server faults.
  static ApiError from_exception(std::exception_ptr e);

  int status() const noexcept { return status_; }
  const std::string& type() const noexcept { return type_; }
  const std::string& param() const noexcept { return param_; }
  const std::string& code() const noexcept { return code_; }
  nlohmann::json to_json() const;

 private:
  int status_;
  std::string type_, param_, code_;
};

// Serialises with invalid UTF-8 replaced, so a partial token never throws.
std::string dump_json(const nlohmann::json& j);

// A fresh object id: prefix, separator, 16 hex digits (chatcmpl-…, call_…).
std::string random_id(const char* prefix, char separator = '-');

}  // namespace nextok::server
