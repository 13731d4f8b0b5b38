// unevaluatedProperties and unevaluatedItems where what is evaluated is
// known once the alternatives are distributed. A conjunction that reaches
// plain() holds one branch of every anyOf/oneOf, one case of every if and
// dependentSchemas: the schemas a part's keyword sees as evaluated are then
// the part and its in-place subschemas (allOf, $ref, and the chosen
// branches) that are among the parts. So `unevaluatedProperties: U` is
// `{properties: {name: true...}, patternProperties: {pattern: true...},
// additionalProperties: U}` over their names and patterns, and
// `unevaluatedItems: U` is `{prefixItems: [true...], items: U}` over their
// longest prefix: exact for allOf, $ref and oneOf. Where several anyOf
// branches hold together, the spec counts the names of all of them and
// this counts the chosen branch's: stricter, never looser (documented).
// `contains` evaluates the items it matches, which no fixed prefix says:
// unevaluatedItems beside it stays unsupported.
#include "constraint/schema/schema_compiler_impl.hpp"

namespace nextok::constraint::schema_detail {

namespace {

struct Evaluated {
  std::set<std::string> names, patterns;
  bool all_properties = false;
  size_t prefix = 0;
  bool all_items = false;
  bool contains = false;
};

}  // namespace

void Compiler::add_unevaluated(std::vector<Part>& parts) {
  const auto owns = [](const Part& p) {
    return !(p.done & kUnevaluatedDone) && p.j->is_object() &&
           (p.j->contains("unevaluatedProperties") || p.j->contains("unevaluatedItems"));
  };
  if (std::none_of(parts.begin(), parts.end(), owns)) return;
  std::set<const json*> present;
  for (const auto& p : parts) {
    present.insert(p.j);
    // A case of an `if` on one property that holds the `if` as written.
    if (auto it = if_holds_.find(p.j); it != if_holds_.end()) present.insert(it->second);
  }
  const size_t n = parts.size();
  for (size_t k = 0; k < n; ++k) {
    if (!owns(parts[k])) continue;
    const json& owner = *parts[k].j;
    const auto up = owner.find("unevaluatedProperties");
    const auto ui = owner.find("unevaluatedItems");
    parts[k].done |= kUnevaluatedDone;
    // The owner and its in-place subschemas among the parts, breadth first.
    Evaluated e;
    std::vector<const json*> todo = {&owner};
    std::set<const json*> seen = {&owner};
    const auto visit = [&](const json& x) {
      if (present.contains(&x) && seen.insert(&x).second) todo.push_back(&x);
    };
    for (size_t i = 0; i < todo.size(); ++i) {
      tick();
      const json& x = *todo[i];
      if (!x.is_object()) continue;
      const bool other = &x != &owner;
      if (x.contains("additionalProperties") || (other && x.contains("unevaluatedProperties")))
        e.all_properties = true;
      if (x.contains("additionalItems") || (other && x.contains("unevaluatedItems")))
        e.all_items = true;
      if (auto it = x.find("properties"); it != x.end() && it->is_object()) {
        for (const auto& [name, _] : it->items()) e.names.insert(name);
      }
      if (auto it = x.find("patternProperties"); it != x.end() && it->is_object()) {
        for (const auto& [pattern, _] : it->items()) e.patterns.insert(pattern);
      }
      if (auto it = x.find("prefixItems"); it != x.end() && it->is_array())
        e.prefix = std::max(e.prefix, it->size());
      if (auto it = x.find("items"); it != x.end()) {
        if (it->is_array()) {
          e.prefix = std::max(e.prefix, it->size());  // drafts before 2020-12
        } else {
          e.all_items = true;
        }
      }
      if (x.contains("contains")) e.contains = true;
      for (const char* kw : {"allOf", "anyOf", "oneOf"}) {
        if (auto it = x.find(kw); it != x.end() && it->is_array()) {
          for (const auto& b : *it) visit(b);
        }
      }
      for (const char* kw : {"if", "then", "else"}) {
        if (auto it = x.find(kw); it != x.end()) visit(*it);
      }
      // dependentSchemas, and draft 7's schema-form dependencies.
      for (const char* kw : {"dependentSchemas", "dependencies"}) {
        if (auto it = x.find(kw); it != x.end() && it->is_object()) {
          for (const auto& [_, s] : it->items()) visit(s);
        }
      }
      if (auto it = x.find("$ref"); it != x.end() && it->is_string()) {
        try {
          visit(*refs_.resolve(it->get<std::string>(), &x, "").first);
        } catch (const Error&) {
          // flatten() reported an unresolvable $ref already
        }
      }
    }
    const std::string at = parts[k].ptr;  // a copy: parts grows below
    if (up != owner.end() && !e.all_properties) {
      json rest = json::object();
      for (const auto& name : e.names) rest["properties"][name] = true;
      for (const auto& pattern : e.patterns) rest["patternProperties"][pattern] = true;
      rest["additionalProperties"] = in_place(*up);
      parts.push_back({made(std::move(rest)), at + "/unevaluatedProperties", kExpanded});
    }
    if (ui != owner.end() && !e.all_items) {
      if (e.contains) {
        unsupported(at + "/unevaluatedItems", "unevaluatedItems beside contains");
        continue;
      }
      json rest = json::object();
      if (e.prefix > 0) rest["prefixItems"] = json(std::vector<json>(e.prefix, json(true)));
      rest["items"] = in_place(*ui);
      parts.push_back({made(std::move(rest)), at + "/unevaluatedItems", kExpanded});
    }
  }
}

json Compiler::in_place(const json& schema) {
  if (schema.is_boolean()) return schema;
  auto [it, fresh] = in_place_refs_.try_emplace(&schema);
  if (fresh) it->second = SchemaRefs::internal_ref(refs_.add_internal(&schema));
  return json{{"$ref", it->second}};
}

const json* Compiler::made(json schema) {
  auto [it, fresh] = made_schemas_.try_emplace(schema.dump());
  if (fresh) it->second = std::make_unique<const json>(std::move(schema));
  return it->second.get();
}

}  // namespace nextok::constraint::schema_detail
