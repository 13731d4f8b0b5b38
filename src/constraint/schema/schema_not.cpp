#include "constraint/schema/schema_not.hpp"

#include <algorithm>
#include <cmath>

#include "constraint/schema/schema_keywords.hpp"
#include "constraint/schema/schema_types.hpp"
#include "constraint/schema/unique_items.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

using json = nlohmann::json;

// Keywords that constrain nothing, allowed beside the negated one: every
// keyword but the constraining ones (annotations, and unknown keywords,
// which validators ignore).
bool annotation(const std::string& k) {
  return k != "enum" && k != "const" && !k.starts_with("$nextok:") &&
         std::none_of(std::begin(kConstraining), std::end(kConstraining),
                      [&](const char* c) { return k == c; });
}

// The one constraining keyword of s, or "" when there are none or several.
std::string sole_keyword(const json& s) {
  std::string found;
  for (const auto& [k, v] : s.items()) {
    if (annotation(k)) continue;
    if (!found.empty()) return "+";
    found = k;
  }
  return found;
}

// A `required` list as a set of names; false when it is not one.
bool names_of(const json& s, std::vector<std::string>& out) {
  if (!s.is_object() || sole_keyword(s) != "required" || !s["required"].is_array()) return false;
  for (const auto& r : s["required"]) {
    if (!r.is_string()) return false;
    out.push_back(r.get<std::string>());
  }
  return true;
}

// A number JSON Schema would count equal to other spellings the engine's
// number spellings cover (plain decimal); exponent texts are not.
bool plain_number(const json& v) {
  const double d = v.get<double>();
  if (v.is_number_integer() || v.is_number_unsigned()) return std::abs(d) < 9007199254740992.0;
  if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9007199254740992.0) return true;
  return v.dump().find_first_of("eE") == std::string::npos;
}

}  // namespace

Negation negation_of(const json& n, const std::string& ptr) {
  Negation out;
  out.ptr = ptr;
  if (n.is_boolean()) {
    out.everything = n.get<bool>();
    return out;
  }
  if (!n.is_object()) {
    throw Error(ErrorCode::kInvalidArgument, ptr,
                "schema at " + ptr + ": a schema must be an object or a boolean");
  }
  const std::string kw = sole_keyword(n);
  if (kw.empty()) {
    out.everything = true;  // not: {} — every value matches {}
  } else if (kw == "not") {
    out.twice = true;
  } else if (kw == "type") {
    out.types = parse_types(n["type"], ptr + "/type");
    // Excluding integers from numbers leaves the fractions.
    if ((out.types & kInteger) && !(out.types & kNumber)) {
      out.types &= ~kInteger;
      out.integers = true;
    }
  } else if (kw == "enum" || kw == "const") {
    const json list = kw == "const" ? json::array({n["const"]}) : n["enum"];
    if (!list.is_array())
      throw Error(ErrorCode::kInvalidArgument, ptr + "/enum", "enum must be an array");
    for (const auto& v : list) {
      if (v.is_object() || v.is_array()) {
        out.unsupported = "not: {enum} with objects or arrays";
      } else if (v.is_number() && !plain_number(v)) {
        out.unsupported = "not: {enum} with exponent numbers";
      }
      out.values.push_back(v);
    }
  } else if (kw == "pattern") {
    if (!n["pattern"].is_string()) {
      throw Error(ErrorCode::kInvalidArgument, ptr + "/pattern", "pattern must be a string");
    }
    // `pattern` holds for every value that is not a string.
    out.patterns.push_back(n["pattern"].get<std::string>());
    out.types |= kAllTypes & ~kString;
  } else if (kw == "multipleOf") {
    const json& m = n["multipleOf"];
    if (!m.is_number() || !(m.get<double>() > 0))
      throw Error(ErrorCode::kInvalidArgument, ptr + "/multipleOf",
                  "multipleOf must be a number > 0");
    // `multipleOf` holds for every value that is not a number.
    out.multiples.push_back(m);
    out.types |= kAllTypes & ~(kNumber | kInteger);
  } else if (kw == "required") {
    out.forbidden.emplace_back();
    if (!names_of(n, out.forbidden.back()))
      out.unsupported = "not: {required} that is not a list of names";
  } else if (kw == "anyOf" || kw == "allOf") {
    // not anyOf(required Ri) = no Ri complete; not allOf(required Ri) = not their union.
    const json& list = n[kw];
    std::vector<std::string> all;
    for (const auto& s : list.is_array() ? list : json::array()) {
      std::vector<std::string> names;
      if (!names_of(s, names)) {
        out.unsupported = "not: {" + kw + "} of anything but required lists";
        break;
      }
      if (kw == "anyOf") out.forbidden.push_back(names);
      all.insert(all.end(), names.begin(), names.end());
    }
    if (!list.is_array() || list.empty()) out.unsupported = "not: {" + kw + "} that is not a list";
    if (kw == "allOf") out.forbidden.push_back(all);
  } else {
    out.unsupported = "not: {" + (kw == "+" ? std::string("several keywords") : kw) + "}";
  }
  for (auto& f : out.forbidden) {
    std::sort(f.begin(), f.end());
    f.erase(std::unique(f.begin(), f.end()), f.end());
  }
  // `required` holds for every value that is not an object, so its
  // negation (and an anyOf or allOf of such) leaves objects alone.
  if (!out.forbidden.empty()) out.types |= kAllTypes & ~kObject;
  // not: {required: []} holds for every object, so nothing is allowed.
  if (std::any_of(out.forbidden.begin(), out.forbidden.end(),
                  [](const auto& f) { return f.empty(); }) &&
      out.unsupported.empty()) {
    out.unsupported = "not: {required: []}";
  }
  return out;
}

namespace {

bool holds_ref(const json& j) {
  if (j.is_object()) {
    if (j.contains("$ref") || j.contains("$dynamicRef")) return true;
    for (const auto& [k, v] : j.items())
      if (holds_ref(v)) return true;
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (holds_ref(v)) return true;
  }
  return false;
}

// A bound keyword's opposite on the bound's own type: value -> (type, keyword, value).
std::optional<json> negated_bound(const std::string& k, const json& v) {
  if (!v.is_number()) return std::nullopt;
  static const char* const kNumber[][2] = {{"maximum", "exclusiveMinimum"},
                                           {"minimum", "exclusiveMaximum"},
                                           {"exclusiveMaximum", "minimum"},
                                           {"exclusiveMinimum", "maximum"}};
  for (const auto& [kw, dual] : kNumber)
    if (k == kw) return json{{"type", "number"}, {dual, v}};
  // Counts: a non-negative integer n; "at most n" fails from n + 1 on.
  if (!is_integral(v) || v.get<double>() < 0 || v.get<double>() > 1e15) return std::nullopt;
  const auto n = static_cast<long long>(v.get<double>());
  static const char* const kCount[][3] = {{"minLength", "maxLength", "string"},
                                          {"maxLength", "minLength", "string"},
                                          {"minItems", "maxItems", "array"},
                                          {"maxItems", "minItems", "array"},
                                          {"minProperties", "maxProperties", "object"},
                                          {"maxProperties", "minProperties", "object"}};
  for (const auto& [kw, dual, type] : kCount) {
    if (k != kw) continue;
    const bool at_least = k.rfind("min", 0) == 0;
    if (at_least && n == 0) return json(false);  // every value has at least 0
    return json{{"type", type}, {dual, at_least ? n - 1 : n + 1}};
  }
  return std::nullopt;
}

}  // namespace

std::optional<json> negated_schema(const json& s, const std::string& ptr, const NegationContext* cx,
                                   int depth) {
  if (s.is_boolean()) return json(!s.get<bool>());
  if (!s.is_object() || depth > 16) return std::nullopt;
  const std::string kw = sole_keyword(s);
  if (kw == "$ref") {  // a lone $ref (any draft): its target
    const json* target = cx != nullptr ? cx->resolve(s) : nullptr;
    if (target == nullptr) return std::nullopt;
    if (cx->negated) return cx->negated(*target, ptr);
    return negated_schema(*target, ptr, cx, depth + 1);
  }
  // A schema standing for x: x itself, or (holding $refs, which resolve
  // where x is written) a reference to it in place.
  auto in_place = [&](const json& x) -> std::optional<json> {
    if (!holds_ref(x)) return x;
    if (cx != nullptr && cx->refer) return cx->refer(x);
    return std::nullopt;
  };
  const Negation neg = negation_of(s, ptr);
  if (neg.unsupported.empty()) {
    if (neg.everything) return json(false);
    if (neg.twice) {
      if (cx == nullptr) return s["not"];
      return in_place(s["not"]);
    }
    return json{{"not", s}};
  }
  if ((kw == "anyOf" || kw == "allOf") && s[kw].is_array() && !s[kw].empty()) {
    json parts = json::array();
    for (const auto& x : s[kw]) {
      auto n = negated_schema(x, ptr, cx, depth + 1);
      if (!n) return std::nullopt;
      parts.push_back(std::move(*n));
    }
    return json{{kw == "anyOf" ? "allOf" : "anyOf", std::move(parts)}};
  }
  if (kw.empty()) return std::nullopt;
  // Keywords that each constrain on their own: not (A and B) = not A or not B.
  // Draft-04's boolean exclusiveMaximum changes what maximum means: left alone.
  for (const char* ex : {"exclusiveMaximum", "exclusiveMinimum"})
    if (auto it = s.find(ex); it != s.end() && it->is_boolean()) return std::nullopt;
  json parts = json::array();
  for (const auto& [k, v] : s.items()) {
    if (annotation(k)) continue;
    std::optional<json> n;
    if (k == "type" || k == "enum" || k == "const" || k == "pattern" || k == "required" ||
        k == "multipleOf") {
      if (kw == "+") n = negated_schema(json{{k, v}}, ptr);
    } else if (cx == nullptr) {
      return std::nullopt;
    } else if (k == "then" || k == "else" || k == "minContains" || k == "maxContains") {
      continue;                // read with if and contains (alone, they constrain nothing)
    } else if (k == "$ref") {  // beside other keywords (draft 2019 on): a conjunct
      const json* target = cx->resolve(s);
      if (target == nullptr) return std::nullopt;
      n = cx->negated ? cx->negated(*target, ptr) : negated_schema(*target, ptr, cx, depth + 1);
    } else if (k == "contains") {
      // No item it takes (or fewer than minContains, or more than maxContains).
      if (s.contains("minContains") || s.contains("maxContains")) return std::nullopt;
      auto ns = negated_schema(v, ptr, cx, depth + 1);
      if (!ns) return std::nullopt;
      n = json{{"type", "array"}, {"items", std::move(*ns)}};
    } else if (k == "oneOf" && v.is_array() && !v.empty() && v.size() <= 8) {
      // No branch holds, or two do.
      json none = json::array(), some = json::array();
      for (const auto& x : v) {
        auto nx = negated_schema(x, ptr, cx, depth + 1);
        if (!nx) return std::nullopt;
        none.push_back(std::move(*nx));
      }
      some.push_back({{"allOf", std::move(none)}});
      for (size_t a = 0; a < v.size(); ++a) {
        for (size_t b = a + 1; b < v.size(); ++b) {
          auto xa = in_place(v[a]), xb = in_place(v[b]);
          if (!xa || !xb) return std::nullopt;
          some.push_back({{"allOf", json::array({std::move(*xa), std::move(*xb)})}});
        }
      }
      n = json{{"anyOf", std::move(some)}};
    } else if (k == "if") {
      // The test holds and then fails, or the test fails and else does.
      json some = json::array();
      if (auto t = s.find("then"); t != s.end()) {
        auto test = in_place(v);
        auto nt = negated_schema(*t, ptr, cx, depth + 1);
        if (!test || !nt) return std::nullopt;
        some.push_back({{"allOf", json::array({std::move(*test), std::move(*nt)})}});
      }
      if (auto e = s.find("else"); e != s.end()) {
        auto ni = negated_schema(v, ptr, cx, depth + 1);
        auto ne = negated_schema(*e, ptr, cx, depth + 1);
        if (!ni || !ne) return std::nullopt;
        some.push_back({{"allOf", json::array({std::move(*ni), std::move(*ne)})}});
      }
      n = some.empty() ? json(false) : json{{"anyOf", std::move(some)}};
    } else if ((k == "dependencies" || k == "dependentRequired" || k == "dependentSchemas") &&
               v.is_object()) {
      // Some trigger present without what it needs.
      json some = json::array();
      for (const auto& [t, d] : v.items()) {
        std::optional<json> nd;
        if (d.is_array()) {
          if (d.empty()) continue;  // needs nothing
          nd = json{{"not", {{"required", d}}}};
        } else {
          nd = negated_schema(d, ptr, cx, depth + 1);
        }
        if (!nd) return std::nullopt;
        if (*nd == json(false)) continue;
        some.push_back({{"type", "object"},
                        {"required", json::array({t})},
                        {"allOf", json::array({std::move(*nd)})}});
      }
      n = some.empty() ? json(false) : json{{"anyOf", std::move(some)}};
    } else if (k == "properties" && v.is_object()) {
      // Some named property present with a value its schema refuses.
      json some = json::array();
      for (const auto& [name, sub] : v.items()) {
        auto ns = negated_schema(sub, ptr, cx, depth + 1);
        if (!ns) return std::nullopt;
        if (ns->is_boolean() && !ns->get<bool>()) continue;  // every value passes
        some.push_back({{"type", "object"},
                        {"required", json::array({name})},
                        {"properties", {{name, std::move(*ns)}}}});
      }
      n = some.empty() ? json(false) : json{{"anyOf", std::move(some)}};
    } else if (k == "items" && (v.is_object() || v.is_boolean()) && !s.contains("prefixItems") &&
               !s.contains("additionalItems")) {
      // Some item its schema refuses.
      auto ns = negated_schema(v, ptr, cx, depth + 1);
      if (!ns) return std::nullopt;
      n = ns->is_boolean() && !ns->get<bool>()
              ? json(false)
              : json{{"type", "array"}, {"contains", std::move(*ns)}};
    } else if (k == "patternProperties" && v.is_object()) {
      // Some key a pattern matches with a value its schema refuses.
      json some = json::array();
      for (const auto& [pattern, sub] : v.items()) {
        auto ns = negated_schema(sub, ptr, cx, depth + 1);
        if (!ns) return std::nullopt;
        if (*ns == json(false)) continue;  // the pattern takes every value
        some.push_back({{"type", "object"},
                        {kSomeKeyMatching, {{"pattern", pattern}, {"value", std::move(*ns)}}}});
      }
      n = some.empty() ? json(false) : json{{"anyOf", std::move(some)}};
    } else if (k == "not") {  // not (not X) is X; $refs inside stay in place
      if (holds_ref(v)) return std::nullopt;
      n = v;
    } else if (k == "additionalProperties") {
      // Some key outside `properties`, with a value additionalProperties
      // refuses: supported where it refuses every value (a closed object).
      auto na = negated_schema(v, ptr, cx, depth + 1);
      if (!na) return std::nullopt;
      if (*na == json(false)) {  // additionalProperties takes every value
        n = json(false);
      } else if (*na == json(true) || *na == json::object()) {
        json names = json::array(), declared = json::object();
        if (auto p = s.find("properties"); p != s.end()) {
          if (!p->is_object()) return std::nullopt;
          for (const auto& [name, sub] : p->items()) {
            names.push_back(name);
            declared[name] = json::object();
          }
        }
        n = json{{"type", "object"},
                 {"properties", std::move(declared)},
                 {kSomeKeyOutside, std::move(names)}};
        // Keys the patterns match are no more outside than the names.
        if (auto p = s.find("patternProperties"); p != s.end()) {
          if (!p->is_object()) return std::nullopt;
          json patterns = json::array();
          for (const auto& [pattern, sub] : p->items()) patterns.push_back(pattern);
          (*n)[kSomeKeyOutsidePatterns] = std::move(patterns);
        }
      } else {
        return std::nullopt;
      }
    } else {
      n = negated_bound(k, v);
    }
    if (!n) return std::nullopt;
    parts.push_back(std::move(*n));
  }
  if (parts.empty()) return json(false);  // nothing constrains: every value holds
  if (parts.size() == 1) return std::move(parts[0]);
  return json{{"anyOf", std::move(parts)}};
}

}  // namespace nextok::constraint
