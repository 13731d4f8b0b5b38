// `not` in the forms that can be enforced exactly: excluded types
// (not: {type}; integer alone leaves the fractions), excluded scalar values (not: {enum} /
// {const}), patterns no string may match (not: {pattern}), multiples no number may be (not:
// {multipleOf}) and property sets that must not all be
// present (not: {required}, and their anyOf / allOf combinations). Other forms are reported
// unsupported.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nextok::constraint {

struct Negation {
  bool everything = false;  // not: {} or not: true — no value at all
  unsigned types = 0;       // type bits (schema_types.hpp) no value may have
  // not: {type: integer} (numbers stay): no integral number. The fractions
  // left keep their plain decimal and normalized negative-exponent
  // spellings (kFractionRegex), which are fractions whatever the digits.
  bool integers = false;
  nlohmann::json values = nlohmann::json::array();  // scalars no value may equal
  // Each set: the object must not hold all of these properties.
  std::vector<std::vector<std::string>> forbidden;
  std::vector<std::string> patterns;  // no string may match these (search semantics)
  // not: {multipleOf: m}: no number may be a multiple of these.
  std::vector<nlohmann::json> multiples;
  std::string ptr;                    // of the `not`, for errors
  bool twice = false;                 // not: {not: s} — the value must match s (a conjunct)
  std::string unsupported;            // non-empty: this form cannot be enforced (why)
};

// What `not: n` excludes; `ptr` points at the `not` for errors.
Negation negation_of(const nlohmann::json& n, const std::string& ptr);

// A keyword only negated_schema writes (the compiler honours it only in
// schemas it generated): {"type": "object", "properties": {n: {}...},
// kSomeKeyOutside: [n...]} is an object holding some key outside the names,
// with any value: the negation of a closed object.
inline constexpr const char* kSomeKeyOutside = "$nextok:someKeyOutside";
// Beside it: patterns (search semantics) whose keys are not outside either.
inline constexpr const char* kSomeKeyOutsidePatterns = "$nextok:someKeyOutsidePatterns";
// {"type": "object", kSomeKeyMatching: {"pattern": p, "value": s}}: an object
// holding some key that p matches (search semantics) with a value s takes:
// the negation of patternProperties {p: not s}.
inline constexpr const char* kSomeKeyMatching = "$nextok:someKeyMatching";

// The target of the `$ref` in schema object `holder` (in the document), or
// nullptr when it cannot be followed.
using RefResolver = std::function<const nlohmann::json*(const nlohmann::json& holder)>;

// What negation may reach beyond the schema itself (the compiler gives all).
struct NegationContext {
  RefResolver resolve;  // a $ref's target
  // A schema standing for `original` where it is written, so that its $refs
  // resolve there (a $ref to it in place).
  std::function<nlohmann::json(const nlohmann::json& original)> refer;
  // A schema standing for not `target`, one per target, so that recursive
  // definitions negate through themselves; nullopt when it has no negation.
  std::function<std::optional<nlohmann::json>(const nlohmann::json& target, const std::string& ptr)>
      negated;
};

// A schema equal to `not: s` built only from the forms above, or nullopt:
// s itself negatable; anyOf / allOf of negatable schemas (De Morgan); or
// independent keywords each negatable, as the anyOf of their negations:
// type, enum, const, pattern, required; with a context, also $ref (its
// target's negation), properties (some named property present with a value
// its schema refuses), items (some item refused: contains), contains (every
// item refused), additionalProperties: false (some key outside properties
// and patternProperties: kSomeKeyOutside), oneOf (none or two hold),
// if/then/else, dependencies, not (its schema) and the bounds (maximum,
// minLength, maxItems, ... as the opposite bound on their own type).
// Keywords outside the specification constrain nothing. $refs in the result
// are the context's.
std::optional<nlohmann::json> negated_schema(const nlohmann::json& s, const std::string& ptr,
                                             const NegationContext* cx = nullptr, int depth = 0);

}  // namespace nextok::constraint
