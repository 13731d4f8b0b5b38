// Typed reads of a request body's fields: each wrong type or out-of-range
// value is an ApiError naming the parameter, as OpenAI names it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nextok::server::fields {

using nlohmann::json;

const char* type_name(const json& v);
[[noreturn]] void wrong_type(const std::string& name, const json& v, const char* want);
// A present, non-null field (OpenAI treats null as absent).
const json* field(const json& body, const char* name);
double number(const json& v, const std::string& name, double lo, double hi);
std::int64_t integer(const json& v, const std::string& name, std::int64_t lo, std::int64_t hi);
bool boolean(const json& v, const std::string& name);
const std::string& string(const json& v, const std::string& name);
[[noreturn]] void unsupported(const std::string& name, const std::string& why);
// A 400 naming `name` when `text` (JSON) nests deeper than 256 levels.
void check_depth(std::string_view text, const std::string& name, const char* what);

}  // namespace nextok::server::fields
