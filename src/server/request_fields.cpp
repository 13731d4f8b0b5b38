#include "request_fields.hpp"

#include <cmath>

#include "api_error.hpp"
#include "util/json_depth.hpp"

namespace nextok::server::fields {

const char* type_name(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void wrong_type(const std::string& name, const json& v, const char* want) {
  throw ApiError::bad_param(
      name, std::string("'") + name + "' must be " + want + ", not " + type_name(v) + ".",
      "invalid_type");
}

const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

double number(const json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number()) wrong_type(name, v, "a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    throw ApiError::bad_param(name,
                              "'" + name + "' is " + v.dump() + "; it must be between " +
                                  json(lo).dump() + " and " + json(hi).dump() + ".",
                              "out_of_range");
  }
  return x;
}

std::int64_t integer(const json& v, const std::string& name, std::int64_t lo, std::int64_t hi) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15)
      wrong_type(name, v, "an integer");
  } else if (!v.is_number_integer()) {
    wrong_type(name, v, "an integer");
  }
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    throw ApiError::bad_param(
        name, "'" + name + "' is too large (at most " + std::to_string(hi) + ").", "out_of_range");
  }
  const std::int64_t x =
      v.is_number_float() ? static_cast<std::int64_t>(v.get<double>()) : v.get<std::int64_t>();
  if (x < lo || x > hi) {
    throw ApiError::bad_param(name,
                              "'" + name + "' is " + std::to_string(x) + "; it must be between " +
                                  std::to_string(lo) + " and " + std::to_string(hi) + ".",
                              "out_of_range");
  }
  return x;
}

bool boolean(const json& v, const std::string& name) {
  if (!v.is_boolean()) wrong_type(name, v, "a boolean");
  return v.get<bool>();
}

const std::string& string(const json& v, const std::string& name) {
  if (!v.is_string()) wrong_type(name, v, "a string");
  return v.get_ref<const std::string&>();
}

[[noreturn]] void unsupported(const std::string& name, const std::string& why) {
  throw ApiError::bad_param(name, why, "unsupported_parameter");
}

void check_depth(std::string_view text, const std::string& name, const char* what) {
  constexpr std::size_t kMaxDepth = 256;
  if (util::json_depth(text, kMaxDepth) > kMaxDepth) {
    throw ApiError::bad_param(
        name, std::string(what) + " nests deeper than " + std::to_string(kMaxDepth) + " levels");
  }
}

}  // namespace nextok::server::fields
