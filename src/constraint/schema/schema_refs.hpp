// $ref resolution inside one schema document: JSON pointers ("#/$defs/a"),
// $anchor names ("#name", and `$id: "#name"`) and $id-identified subschemas
// (`id` in draft-04 documents), with references
// resolved against the base URI in scope (RFC 3986, without dot-segment
// subtleties). Remote documents are not fetched: such a $ref is a clear
// error, never a guess.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

namespace nextok::constraint {

class SchemaRefs {
 public:
  explicit SchemaRefs(const nlohmann::json& root);
  // The target of `ref` written in schema object `from` (at pointer
  // from_ptr), and the target's JSON pointer. Throws Error{kInvalidArgument}.
  std::pair<const nlohmann::json*, std::string> resolve(const std::string& ref,
                                                        const nlohmann::json* from,
                                                        const std::string& from_ptr) const;

 private:
  void index(const nlohmann::json& j, const std::string& ptr, const std::string& base,
             size_t depth);
  // The subschema's base-URI keyword: `$id`, or `id` in draft-04/03 documents.
  const nlohmann::json* id_of(const nlohmann::json& j) const;
  bool legacy_id_ = false;
  const nlohmann::json& root_;
  std::string root_base_;
  std::map<std::string, std::pair<const nlohmann::json*, std::string>> ids_, anchors_;
  std::unordered_map<const nlohmann::json*, std::string> base_of_;
};

// RFC 3986 reference resolution, enough for $id/$ref.
std::string resolve_uri(const std::string& base, const std::string& ref);

}  // namespace nextok::constraint
