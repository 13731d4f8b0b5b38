// Whether one JSON value satisfies a schema, decided directly: for the
// finite value sets of enum/const, where the language is the listed values
// that satisfy the rest of the schema, whatever keywords that rest uses
// (`contains`, `not` of several keywords, object keywords beside an
// object-valued enum, ...). Exact or silent: a keyword it does not decide
// exactly (a standard `format`, a pattern Python's and ECMA-262's classes
// read differently, unevaluated*, dynamic refs) gives nullopt.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "constraint/regex/dfa.hpp"
#include "constraint/schema/schema_refs.hpp"

namespace nextok::constraint {

class ValueCheck {
 public:
  ValueCheck(const SchemaRefs& refs, bool draft4) : refs_(refs), draft4_(draft4) {}
  // Keywords of the top schema that another part of the caller's
  // conjunction already stands for (a distributed anyOf/oneOf branch, the
  // cases of an if or of schema dependencies): not checked again.
  // The keywords flattening moved into parts of their own ($ref and allOf
  // targets, the s of not: {not: s}, a rewritten not) are skipped too.
  enum Skip : unsigned {
    kSkipAnyOf = 1,
    kSkipOneOf = 2,
    kSkipIf = 4,
    kSkipDependentSchemas = 8,
    kSkipRefAndAllOf = 16,
    kSkipNot = 32
  };
  // nullopt: not decided exactly (the caller keeps its own verdict).
  std::optional<bool> holds(const nlohmann::json& schema, const nlohmann::json& v, size_t depth = 0,
                            unsigned skip = 0);

 private:
  std::optional<bool> object_holds(const nlohmann::json& s, const nlohmann::json& v, size_t depth,
                                   unsigned skip);
  std::optional<bool> array_holds(const nlohmann::json& s, const nlohmann::json& v, size_t depth);
  std::optional<bool> string_holds(const nlohmann::json& s, const std::string& v);
  // The pattern finds a match in text under both class readings; nullopt
  // when the readings disagree or the pattern does not compile.
  std::optional<bool> search(const std::string& pattern, const std::string& text);
  bool is_type(const nlohmann::json& v, const std::string& type) const;

  const SchemaRefs& refs_;
  bool draft4_;
  std::map<std::string, std::shared_ptr<const Dfa>> patterns_[2];
};

}  // namespace nextok::constraint
