#include "constraint/schema/schema_drafts.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nextok::constraint {

using json = nlohmann::json;

Draft declared_draft(const json& root) {
  if (!root.is_object()) return Draft::kUndeclared;
  auto it = root.find("$schema");
  if (it == root.end() || !it->is_string()) return Draft::kUndeclared;
  const std::string uri = it->get<std::string>();
  if (uri.find("json-schema.org") == std::string::npos) return Draft::kUndeclared;
  if (uri.find("draft-03") != std::string::npos) return Draft::k3;
  if (uri.find("draft-04") != std::string::npos) return Draft::k4;
  if (uri.find("draft-06") != std::string::npos) return Draft::k6;
  if (uri.find("draft-07") != std::string::npos) return Draft::k7;
  if (uri.find("2019-09") != std::string::npos) return Draft::k2019;
  if (uri.find("2020-12") != std::string::npos) return Draft::k2020;
  return Draft::kUndeclared;
}

namespace {

// Keywords whose value is a map of name → schema.
constexpr std::array<std::string_view, 6> kSchemaMaps = {
    "properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas"};
// Keywords whose value is a schema or a list of schemas.
constexpr std::array<std::string_view, 15> kApplicators = {"items",
                                                           "additionalItems",
                                                           "additionalProperties",
                                                           "not",
                                                           "if",
                                                           "then",
                                                           "else",
                                                           "contains",
                                                           "allOf",
                                                           "anyOf",
                                                           "propertyNames",
                                                           "unevaluatedProperties",
                                                           "unevaluatedItems",
                                                           "oneOf",
                                                           "prefixItems"};

bool among(std::string_view k, std::span<const std::string_view> list) {
  return std::find(list.begin(), list.end(), k) != list.end();
}

// Beside $ref in drafts up to 07, only these stay: containers that pointers
// may reach into, and identifiers.
constexpr std::array<std::string_view, 6> kBesideRef = {"$ref", "definitions", "$defs",
                                                        "$id",  "id",          "$schema"};

struct Stripper {
  std::vector<std::string_view> drop;
  bool ref_overrides = false;  // drafts up to 07: $ref's siblings are ignored
  bool removed = false;

  void schema(json& s, size_t depth) {
    if (!s.is_object() || depth > 1024) return;  // deeper: SchemaRefs refuses the document
    for (std::string_view k : drop) removed |= s.erase(std::string(k)) > 0;
    if (ref_overrides && s.contains("$ref") && s["$ref"].is_string()) {
      for (auto it = s.begin(); it != s.end();) {
        if (among(it.key(), kBesideRef)) {
          ++it;
        } else {
          it = s.erase(it);
          removed = true;
        }
      }
    }
    for (auto& [k, v] : s.items()) {
      if (among(k, kSchemaMaps)) {
        if (v.is_object())
          for (auto& [name, sub] : v.items()) schema(sub, depth + 1);
      } else if (among(k, kApplicators)) {
        if (v.is_array()) {
          for (auto& sub : v) schema(sub, depth + 1);
        } else {
          schema(v, depth + 1);
        }
      }
    }
  }
};

}  // namespace

std::optional<json> without_undefined_keywords(const json& root) {
  const Draft d = declared_draft(root);
  // Undeclared: every keyword of every draft is read. 2019-09 and 2020-12
  // also keep draft 7's `dependencies`, as the test suite's optional
  // dependencies-compatibility cases expect.
  if (d == Draft::kUndeclared || d == Draft::k2019 || d == Draft::k2020) return std::nullopt;
  Stripper st;
  st.ref_overrides = true;
  // Added in 2019-09.
  st.drop = {"dependentRequired",     "dependentSchemas", "prefixItems",
             "unevaluatedProperties", "unevaluatedItems", "minContains",
             "maxContains",           "$dynamicRef",      "$recursiveRef"};
  if (d != Draft::k7) st.drop.insert(st.drop.end(), {"if", "then", "else"});  // draft-07
  if (d == Draft::k3 || d == Draft::k4)
    st.drop.insert(st.drop.end(), {"const", "contains", "propertyNames"});  // draft-06
  json copy = root;
  st.schema(copy, 0);
  if (!st.removed) return std::nullopt;
  return copy;
}

}  // namespace nextok::constraint
