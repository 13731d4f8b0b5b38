#include "constraint/schema/schema_refs.hpp"

#include <algorithm>
#include <charconv>

#include "constraint/schema/schema_drafts.hpp"
#include "constraint/schema/schema_types.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

using json = nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& from, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, from.empty() ? "/" : from,
              "schema at " + (from.empty() ? "/" : from) + ": " + why);
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      unsigned char byte = 0;  // two hex digits, checked above: always fits
      std::from_chars(s.data() + i + 1, s.data() + i + 3, byte, 16);
      out += static_cast<char>(byte);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// An RFC 6901 array index: "0" or digits without a leading zero. False for
// anything else, and for an index too large for size_t (it cannot exist).
bool array_index(const std::string& tok, std::size_t& index) {
  if (tok.empty() || (tok[0] == '0' && tok.size() > 1)) return false;
  const char* end = tok.data() + tok.size();
  const auto [p, ec] = std::from_chars(tok.data(), end, index);
  return ec == std::errc{} && p == end;
}

}  // namespace

std::string resolve_uri(const std::string& base, const std::string& ref) {
  const std::string b = base.substr(0, base.find('#'));
  if (ref.empty()) return b;
  if (ref[0] == '#') return b + ref;
  const size_t colon = ref.find(':');
  if (colon != std::string::npos && ref.find_first_of("/?#") > colon) return ref;  // has a scheme
  const size_t scheme_end = b.find("://");
  if (ref.rfind("//", 0) == 0)
    return (scheme_end == std::string::npos ? "" : b.substr(0, scheme_end + 1)) + ref;
  if (ref[0] == '/') {
    if (scheme_end == std::string::npos) return ref;
    const size_t path = b.find('/', scheme_end + 3);
    return (path == std::string::npos ? b : b.substr(0, path)) + ref;
  }
  const size_t slash = b.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : b.substr(0, slash + 1);
  std::string rest = ref;
  while (rest.rfind("./", 0) == 0) rest = rest.substr(2);
  while (rest.rfind("../", 0) == 0 && dir.size() > 1) {
    rest = rest.substr(3);
    const size_t up = dir.find_last_of('/', dir.size() - 2);
    if (up == std::string::npos || (scheme_end != std::string::npos && up < scheme_end + 3)) break;
    dir = dir.substr(0, up + 1);
  }
  return dir + rest;
}

SchemaRefs::SchemaRefs(const json& root) : root_(root) {
  if (root.is_object()) {
    const Draft draft = declared_draft(root);
    legacy_id_ = draft == Draft::k3 || draft == Draft::k4;
    if (const json* id = id_of(root)) root_base_ = resolve_uri("", id->get<std::string>());
  }
  root_base_ = root_base_.substr(0, root_base_.find('#'));
  index(root, "", root_base_, 0, true);
}

const json* SchemaRefs::id_of(const json& j) const {
  // Draft 4 and 3 spell it `id`, and `$id` is an unknown keyword there (as
  // `id` is in later drafts): validators of the declared draft ignore it.
  const char* kw = legacy_id_ ? "id" : "$id";
  if (auto it = j.find(kw); it != j.end() && it->is_string()) return &*it;
  return nullptr;
}

namespace {

// Where a schema keyword holds subschemas: kMap (name → schema), kList (an
// array of schemas, or one schema), kOne (one schema); kData for the
// values that are data; kNone for every other keyword, known or not, whose
// contents are no schemas (an $id in there identifies nothing).
enum class Holds { kNone, kData, kOne, kList, kMap };
Holds holds(const std::string& k) {
  static const char* const kMaps[] = {"properties",  "patternProperties", "$defs",
                                      "definitions", "dependentSchemas",  "dependencies"};
  static const char* const kLists[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
  static const char* const kOnes[] = {"not",
                                      "if",
                                      "then",
                                      "else",
                                      "contains",
                                      "additionalProperties",
                                      "propertyNames",
                                      "unevaluatedItems",
                                      "unevaluatedProperties",
                                      "additionalItems",
                                      "contentSchema"};
  auto in = [&](const auto& list) {
    return std::any_of(std::begin(list), std::end(list), [&](const char* c) { return k == c; });
  };
  if (k == "enum" || k == "const" || k == "examples" || k == "default") return Holds::kData;
  if (in(kMaps)) return Holds::kMap;
  if (in(kLists)) return Holds::kList;
  if (in(kOnes)) return Holds::kOne;
  return Holds::kNone;
}

}  // namespace

void SchemaRefs::index(const json& j, const std::string& ptr, const std::string& parent_base,
                       size_t depth, bool schema) {
  if (depth > 1024) bad(ptr, "schema nesting is deeper than 1024");
  std::string base = parent_base;
  if (j.is_object()) {
    const json* id = schema ? id_of(j) : nullptr;
    if (id != nullptr) {
      const std::string full = resolve_uri(parent_base, id->get<std::string>());
      base = full.substr(0, full.find('#'));
      // "#name" (draft-04 to 07) names the subschema as $anchor does; a
      // bare fragment leaves the base as it is.
      const std::string frag = full.substr(std::min(full.size(), base.size() + 1));
      if (!frag.empty() && frag[0] != '/') anchors_.emplace(full, std::pair{&j, ptr});
      if (base != parent_base || !id->get<std::string>().starts_with('#'))
        ids_.emplace(base, std::pair{&j, ptr});
    }
    base_of_[&j] = base;
    for (const char* kw : {"$anchor", "$dynamicAnchor"}) {
      if (!schema) break;
      if (auto it = j.find(kw); it != j.end() && it->is_string()) {
        anchors_.emplace(base + "#" + it->get<std::string>(), std::pair{&j, ptr});
      }
    }
    for (const auto& [k, v] : j.items()) {
      const std::string at = ptr + "/" + pointer_escape(k);
      // Below a keyword that holds no schemas, objects are still walked
      // (a $ref into them by pointer resolves against this base), but an
      // $id or $anchor there names nothing.
      const Holds h = schema ? holds(k) : Holds::kNone;
      if (h == Holds::kData) continue;
      if (h == Holds::kMap && v.is_object()) {
        for (const auto& [name, sub] : v.items())
          index(sub, at + "/" + pointer_escape(name), base, depth + 2, true);
        base_of_[&v] = base;
      } else if (h == Holds::kList && v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i)
          index(v[i], at + "/" + std::to_string(i), base, depth + 2, true);
      } else {
        index(v, at, base, depth + 1, h == Holds::kOne || h == Holds::kList);
      }
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      index(j[i], ptr + "/" + std::to_string(i), base, depth + 1, false);
  }
}

std::pair<const json*, std::string> SchemaRefs::resolve(const std::string& ref,
                                                        const json* from_json,
                                                        const std::string& from) const {
  if (ref.starts_with(kInternalPrefix)) {
    const std::string n = ref.substr(std::string_view(kInternalPrefix).size());
    std::size_t id = 0;
    if (!array_index(n, id) || id >= internal_.size()) bad(from + "/$ref", "unknown internal $ref");
    if (internal_[id] == nullptr) {
      throw Error(ErrorCode::kUnsupported, from.empty() ? "/" : from,
                  "schema at " + (from.empty() ? std::string("/") : from) +
                      ": a negation this schema needs is not supported");
    }
    return {internal_[id], from};
  }
  const auto b = base_of_.find(from_json);
  const std::string full = resolve_uri(b == base_of_.end() ? root_base_ : b->second, ref);
  const size_t hash = full.find('#');
  const std::string doc_uri = full.substr(0, hash);
  const std::string frag = hash == std::string::npos ? "" : percent_decode(full.substr(hash + 1));
  const json* doc = &root_;
  std::string doc_ptr;
  if (doc_uri != root_base_) {
    auto it = ids_.find(doc_uri);
    if (it == ids_.end()) {
      bad(from + "/$ref", "$ref \"" + ref + "\" points to another document, which is not fetched");
    }
    std::tie(doc, doc_ptr) = it->second;
  }
  if (frag.empty()) return {doc, doc_ptr};
  if (frag[0] != '/') {
    if (auto it = anchors_.find(doc_uri + "#" + frag); it != anchors_.end()) return it->second;
    bad(from + "/$ref", "$ref \"" + ref + "\": no $anchor \"" + frag + "\"");
  }
  const json* cur = doc;
  std::string ptr = doc_ptr;
  size_t i = 1;
  while (i <= frag.size()) {
    size_t j = frag.find('/', i);
    if (j == std::string::npos) j = frag.size();
    std::string tok;
    for (size_t k = i; k < j; ++k) {
      if (frag[k] == '~' && k + 1 < j && (frag[k + 1] == '0' || frag[k + 1] == '1')) {
        tok += frag[k + 1] == '0' ? '~' : '/';
        ++k;
      } else {
        tok += frag[k];
      }
    }
    std::size_t index = 0;
    if (cur->is_object() && cur->contains(tok)) {
      cur = &(*cur)[tok];
    } else if (cur->is_array() && array_index(tok, index) && index < cur->size()) {
      cur = &(*cur)[index];
    } else if (cur->is_array()) {
      bad(from + "/$ref", "$ref \"" + ref + "\" does not resolve: \"" + tok +
                              "\" is not an index of the " + std::to_string(cur->size()) +
                              "-item array at \"" + ptr + "\"");
    } else {
      bad(from + "/$ref", "$ref \"" + ref + "\" does not resolve");
    }
    ptr += '/';
    ptr += pointer_escape(tok);
    i = j + 1;
  }
  return {cur, ptr};
}

}  // namespace nextok::constraint
