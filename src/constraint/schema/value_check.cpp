#include "constraint/schema/value_check.hpp"

#include <cmath>

#include "constraint/schema/formats.hpp"
#include "constraint/schema/schema_types.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxDepth = 64;

// A keyword's non-negative integer value; nullopt when absent or not one.
std::optional<double> count_of(const json& s, const char* kw) {
  auto it = s.find(kw);
  if (it == s.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A conjunction of verdicts: add() is false when one is undecided.
struct Verdict {
  bool ok = true;
  bool add(std::optional<bool> r) {
    if (!r) return false;
    ok = ok && *r;
    return true;
  }
};

}  // namespace

bool ValueCheck::is_type(const json& v, const std::string& type) const {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (!v.is_number_float() || draft4_) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
  }
  return false;
}

std::optional<bool> ValueCheck::search(const std::string& pattern, const std::string& text) {
  std::optional<bool> found;
  for (int unicode = 0; unicode < 2; ++unicode) {
    auto& slot = patterns_[unicode][pattern];
    if (!slot) {
      RegexOptions ro;
      ro.full_match = false;
      ro.unicode_classes = unicode != 0;
      try {
        slot = std::make_shared<const Dfa>(Dfa::compile(pattern, ro));
      } catch (const Error&) {
        return std::nullopt;
      }
    }
    const bool m = slot->matches(text);
    if (found && *found != m) return std::nullopt;
    found = m;
  }
  return found;
}

std::optional<bool> ValueCheck::string_holds(const json& s, const std::string& v) {
  if (auto n = count_of(s, "minLength"); n && static_cast<double>(code_points(v)) < *n)
    return false;
  if (auto n = count_of(s, "maxLength"); n && static_cast<double>(code_points(v)) > *n)
    return false;
  if (auto it = s.find("pattern"); it != s.end() && it->is_string()) {
    auto m = search(it->get<std::string>(), v);
    if (!m || !*m) return m;
  }
  if (auto it = s.find("format"); it != s.end() && it->is_string()) {
    if (format_is_standard(it->get<std::string>())) return std::nullopt;
  }
  return true;
}

std::optional<bool> ValueCheck::object_holds(const json& s, const json& v, size_t depth,
                                             unsigned skip) {
  Verdict verdict;
  bool& ok = verdict.ok;
  auto all = [&](std::optional<bool> r) { return verdict.add(r); };
  if (auto n = count_of(s, "minProperties"); n && static_cast<double>(v.size()) < *n) ok = false;
  if (auto n = count_of(s, "maxProperties"); n && static_cast<double>(v.size()) > *n) ok = false;
  if (auto it = s.find("required"); it != s.end() && it->is_array()) {
    for (const auto& k : *it)
      if (k.is_string() && !v.contains(k.get<std::string>())) ok = false;
  }
  const json* props = s.contains("properties") ? &s.at("properties") : nullptr;
  const json* pats = s.contains("patternProperties") ? &s.at("patternProperties") : nullptr;
  const json* extra = s.contains("additionalProperties") ? &s.at("additionalProperties") : nullptr;
  const json* names = s.contains("propertyNames") ? &s.at("propertyNames") : nullptr;
  for (const auto& [k, x] : v.items()) {
    bool matched = false;
    if (props && props->is_object() && props->contains(k)) {
      matched = true;
      if (!all(holds(props->at(k), x, depth + 1))) return std::nullopt;
    }
    if (pats && pats->is_object()) {
      for (const auto& [p, sub] : pats->items()) {
        auto m = search(p, k);
        if (!m) return std::nullopt;
        if (!*m) continue;
        matched = true;
        if (!all(holds(sub, x, depth + 1))) return std::nullopt;
      }
    }
    if (!matched && extra && !all(holds(*extra, x, depth + 1))) return std::nullopt;
    if (names && !all(holds(*names, json(k), depth + 1))) return std::nullopt;
  }
  for (const char* kw : {"dependentRequired", "dependentSchemas", "dependencies"}) {
    auto it = s.find(kw);
    if (it == s.end() || !it->is_object()) continue;
    for (const auto& [k, dep] : it->items()) {
      if (!v.contains(k)) continue;
      if (dep.is_array()) {
        for (const auto& d : dep)
          if (d.is_string() && !v.contains(d.get<std::string>())) ok = false;
      } else if (!(skip & kSkipDependentSchemas) && !all(holds(dep, v, depth + 1))) {
        return std::nullopt;
      }
    }
  }
  return ok;
}

std::optional<bool> ValueCheck::array_holds(const json& s, const json& v, size_t depth) {
  Verdict verdict;
  bool& ok = verdict.ok;
  auto all = [&](std::optional<bool> r) { return verdict.add(r); };
  if (auto n = count_of(s, "minItems"); n && static_cast<double>(v.size()) < *n) ok = false;
  if (auto n = count_of(s, "maxItems"); n && static_cast<double>(v.size()) > *n) ok = false;
  if (auto it = s.find("uniqueItems"); it != s.end() && it->is_boolean() && it->get<bool>()) {
    ok = ok && items_unique(v);
  }
  // Tuple items: prefixItems, or an items array (drafts before 2020-12).
  const json* tuple = nullptr;
  const json* rest = nullptr;
  auto items = s.find("items");
  if (auto it = s.find("prefixItems"); it != s.end() && it->is_array()) {
    if (items != s.end() && items->is_array()) return std::nullopt;
    tuple = &*it;
    if (items != s.end()) rest = &*items;
  } else if (items != s.end() && items->is_array()) {
    tuple = &*items;
    if (auto a = s.find("additionalItems"); a != s.end()) rest = &*a;
  } else if (items != s.end()) {
    rest = &*items;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const json* sub = tuple && i < tuple->size() ? &(*tuple)[i] : rest;
    if (sub && !all(holds(*sub, v[i], depth + 1))) return std::nullopt;
  }
  if (auto c = s.find("contains"); c != s.end()) {
    size_t n = 0;
    for (const auto& x : v) {
      auto r = holds(*c, x, depth + 1);
      if (!r) return std::nullopt;
      n += *r;
    }
    const double lo = count_of(s, "minContains").value_or(1);
    if (static_cast<double>(n) < lo) ok = false;
    if (auto hi = count_of(s, "maxContains"); hi && static_cast<double>(n) > *hi) ok = false;
  }
  return ok;
}

std::optional<bool> ValueCheck::holds(const json& s, const json& v, size_t depth, unsigned skip) {
  if (depth > kMaxDepth) return std::nullopt;
  if (s.is_boolean()) return s.get<bool>();
  if (!s.is_object()) return std::nullopt;
  for (const char* kw :
       {"unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"}) {
    if (s.contains(kw)) return std::nullopt;
  }
  Verdict verdict;
  bool& ok = verdict.ok;
  auto all = [&](std::optional<bool> r) { return verdict.add(r); };
  if (auto it = s.find("$ref"); it != s.end() && !(skip & kSkipRefAndAllOf)) {
    if (!it->is_string()) return std::nullopt;
    const json* target = nullptr;
    try {
      target = refs_.resolve(it->get<std::string>(), &s, "").first;
    } catch (const Error&) {
      return std::nullopt;
    }
    if (!all(holds(*target, v, depth + 1))) return std::nullopt;
  }
  if (auto it = s.find("type"); it != s.end()) {
    bool any = false;
    if (it->is_string()) {
      any = is_type(v, it->get<std::string>());
    } else if (it->is_array()) {
      for (const auto& t : *it) any = any || (t.is_string() && is_type(v, t.get<std::string>()));
    } else {
      return std::nullopt;
    }
    ok = ok && any;
  }
  if (auto it = s.find("const"); it != s.end()) ok = ok && *it == v;
  if (auto it = s.find("enum"); it != s.end()) {
    if (!it->is_array()) return std::nullopt;
    bool in = false;
    for (const auto& x : *it) in = in || x == v;
    ok = ok && in;
  }
  if (v.is_number()) ok = ok && number_satisfies(s, v);
  if (v.is_string() && !all(string_holds(s, v.get<std::string>()))) return std::nullopt;
  if (v.is_object() && !all(object_holds(s, v, depth, skip))) return std::nullopt;
  if (v.is_array() && !all(array_holds(s, v, depth))) return std::nullopt;
  if (auto it = s.find("allOf"); it != s.end() && it->is_array() && !(skip & kSkipRefAndAllOf)) {
    for (const auto& b : *it)
      if (!all(holds(b, v, depth + 1))) return std::nullopt;
  }
  for (const char* kw : {"anyOf", "oneOf"}) {
    auto it = s.find(kw);
    if (it == s.end() || skip & (kw[0] == 'a' ? kSkipAnyOf : kSkipOneOf)) continue;
    if (!it->is_array()) return std::nullopt;
    size_t n = 0;
    for (const auto& b : *it) {
      auto r = holds(b, v, depth + 1);
      if (!r) return std::nullopt;
      n += *r;
    }
    ok = ok && (kw[0] == 'a' ? n >= 1 : n == 1);
  }
  if (auto it = s.find("not"); it != s.end() && !(skip & kSkipNot)) {
    auto r = holds(*it, v, depth + 1);
    if (!r) return std::nullopt;
    ok = ok && !*r;
  }
  if (auto it = s.find("if"); it != s.end() && !(skip & kSkipIf)) {
    auto r = holds(*it, v, depth + 1);
    if (!r) return std::nullopt;
    const char* branch = *r ? "then" : "else";
    if (auto b = s.find(branch); b != s.end() && !all(holds(*b, v, depth + 1))) return std::nullopt;
  }
  return ok;
}

}  // namespace nextok::constraint
