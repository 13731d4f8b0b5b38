#include <nlohmann/json.hpp>
#include <string>

#include "constraint/cfg/gbnf.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::cfg {

Symbol embed_gbnf(CfgBuilder& b, std::string_view object_json, size_t at, const Vocabulary* vocab) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(object_json);
  } catch (const nlohmann::json::exception& e) {
    b.fail(at, std::string("%gbnf: not valid JSON: ") + e.what());
  }
  const bool named = j.is_object() && j.contains("name") && j["name"].is_string();
  if (!j.is_object() || j.size() != 1u + named || !j.contains("grammar") ||
      !j["grammar"].is_string())
    b.fail(at, "%gbnf takes \"grammar\" (the GBNF text) and an optional \"name\" for errors");
  Cfg sub;
  try {
    sub = parse_gbnf(j["grammar"].get<std::string>(), b.limits(), vocab);
  } catch (const Error& e) {
    const std::string where = named ? j["name"].get<std::string>() : b.where(at) + ": %gbnf";
    throw Error(e.code(), "grammar", where + ": " + e.what());
  }
  return b.import(sub, at);
}

}  // namespace nextok::constraint::cfg
