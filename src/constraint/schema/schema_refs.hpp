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
#include <vector>

namespace nextok::constraint {

class SchemaRefs {
 public:
  explicit SchemaRefs(const nlohmann::json& root);
  // The target of `ref` written in schema object `from` (at pointer
  // from_ptr), and the target's JSON pointer. Throws Error{kInvalidArgument}.
  std::pair<const nlohmann::json*, std::string> resolve(const std::string& ref,
                                                        const nlohmann::json* from,
                                                        const std::string& from_ptr) const;

  // Schemas the compiler makes (negations) reach other schemas through
  // `{"$ref": internal_ref(id)}`: a subschema in place, so that its own $refs
  // resolve where it is written, or another made schema. A slot left null
  // (a negation that failed) resolves to a kUnsupported error.
  static constexpr const char* kInternalPrefix = "nextok-internal:";
  size_t add_internal(const nlohmann::json* target) {
    internal_.push_back(target);
    return internal_.size() - 1;
  }
  void set_internal(size_t id, const nlohmann::json* target) { internal_.at(id) = target; }
  static std::string internal_ref(size_t id) { return kInternalPrefix + std::to_string(id); }

 private:
  // `schema`: j sits where a schema does (its $id and $anchor count).
  void index(const nlohmann::json& j, const std::string& ptr, const std::string& base, size_t depth,
             bool schema);
  // The subschema's base-URI keyword: `$id`, or `id` in draft-04/03 documents.
  const nlohmann::json* id_of(const nlohmann::json& j) const;
  bool legacy_id_ = false;
  const nlohmann::json& root_;
  std::string root_base_;
  std::map<std::string, std::pair<const nlohmann::json*, std::string>> ids_, anchors_;
  std::unordered_map<const nlohmann::json*, std::string> base_of_;
  std::vector<const nlohmann::json*> internal_;
};

// RFC 3986 reference resolution, enough for $id/$ref.
std::string resolve_uri(const std::string& base, const std::string& ref);

}  // namespace nextok::constraint
