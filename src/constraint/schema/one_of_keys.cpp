#include "constraint/schema/one_of_keys.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "constraint/schema/schema_keywords.hpp"

namespace nextok::constraint {

namespace {

using json = nlohmann::json;

// Keywords that validate something; any other key is an annotation here.
bool validates(const std::string& k) {
  return k == "enum" || k == "const" ||
         std::find(std::begin(kConstraining), std::end(kConstraining), k) !=
             std::end(kConstraining);
}

// A schema every value satisfies: true, or only annotations.
bool accepts_anything(const json& s) {
  if (s.is_boolean()) return s.get<bool>();
  if (!s.is_object()) return false;
  return std::none_of(s.items().begin(), s.items().end(),
                      [](const auto& kv) { return validates(kv.key()); });
}

struct KeyBranch {
  std::vector<std::string> required;  // sorted, unique
  bool object_only = false;
};

std::optional<KeyBranch> key_branch(const json& b) {
  if (!b.is_object()) return std::nullopt;
  KeyBranch out;
  for (const auto& [k, v] : b.items()) {
    if (k == "required") {
      if (!v.is_array()) return std::nullopt;
      for (const auto& n : v) {
        if (!n.is_string()) return std::nullopt;
        out.required.push_back(n.get<std::string>());
      }
    } else if (k == "type") {
      const bool object = v == "object" || v == json::array({"object"});
      if (!object) return std::nullopt;
      out.object_only = true;
    } else if (k == "properties") {
      if (!v.is_object()) return std::nullopt;
      for (const auto& [name, s] : v.items()) {
        if (!accepts_anything(s)) return std::nullopt;
      }
    } else if (validates(k)) {
      return std::nullopt;
    }
  }
  std::sort(out.required.begin(), out.required.end());
  out.required.erase(std::unique(out.required.begin(), out.required.end()), out.required.end());
  return out;
}

}  // namespace

std::optional<json> one_of_by_required(const json& branches) {
  if (!branches.is_array() || branches.size() < 2) return std::nullopt;
  std::vector<KeyBranch> keys;
  for (const auto& b : branches) {
    auto k = key_branch(b);
    if (!k) return std::nullopt;
    keys.push_back(std::move(*k));
  }
  json any = json::array();
  for (size_t i = 0; i < keys.size(); ++i) {
    // An object with branch i's keys has those of every j whose keys are a
    // subset: then it never satisfies exactly one branch.
    json others = json::array();
    bool possible = true;
    for (size_t j = 0; j < keys.size() && possible; ++j) {
      if (j == i) continue;
      possible = !std::includes(keys[i].required.begin(), keys[i].required.end(),
                                keys[j].required.begin(), keys[j].required.end());
      others.push_back({{"required", keys[j].required}});
    }
    if (!possible) continue;
    json branch = {{"type", "object"}, {"not", {{"anyOf", others}}}};
    if (!keys[i].required.empty()) branch["required"] = keys[i].required;
    any.push_back(std::move(branch));
  }
  const auto untyped =
      std::count_if(keys.begin(), keys.end(), [](const KeyBranch& k) { return !k.object_only; });
  if (untyped == 1) any.push_back({{"type", {"null", "boolean", "number", "string", "array"}}});
  if (any.empty()) return json(false);
  return json{{"anyOf", std::move(any)}};
}

}  // namespace nextok::constraint
