// Small pieces of the schema compiler: type sets, counts, number bounds,
// multipleOf, and the oneOf disjointness proof.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/schema/grammar.hpp"
#include "constraint/schema/number_ranges.hpp"

namespace nextok::constraint {

enum TypeBits : unsigned {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,
  kInteger = 32,
  kString = 64,
  kAllTypes = 127,
};

// `type` as a string or an array of strings; throws with `ptr` otherwise.
unsigned parse_types(const nlohmann::json& type, const std::string& ptr);
// A non-negative integer keyword (minLength, maxItems, …), saturating.
uint32_t count_of(const nlohmann::json& v, const std::string& ptr);
// RFC 6901 escaping of one reference token.
std::string pointer_escape(const std::string& token);

// The tightest minimum/maximum of several schemas, as exact decimal text.
struct NumberBounds {
  Bound lo, hi;
  // Folds in one schema's minimum/maximum/exclusive*; true if it had any.
  bool add(const nlohmann::json& schema, const std::string& ptr);
};

// Does the number v satisfy this schema's bounds and multipleOf?
bool number_satisfies(const nlohmann::json& schema, const nlohmann::json& v);

// A regex for the JSON numbers that are multiples of m, when that is
// regular and small: integer m for integers, 10^-k for any number.
std::optional<std::string> multiple_of_regex(const nlohmann::json& m, bool integer);

// multiple_of_dfa reads m as p / 10^k: the largest p and k it builds an
// automaton for ((k + 3) p + 3 states of 256 entries).
inline constexpr uint64_t kMaxMultipleOf = 1000;
inline constexpr uint32_t kMaxMultipleOfDigits = 4;
// Exactly the plain decimal numbers (-?(0|[1-9][0-9]*)(\.[0-9]+)?) that
// are multiples of m = p / 10^k (2.5, 0.25, 6): the digits read as one
// integer through the k-th fraction digit, its remainder mod p the state,
// and only zeros after. nullopt past the limits above, or for m = 1.
std::optional<Dfa> multiple_of_dfa(const nlohmann::json& m);
// Exactly the plain decimal spellings (-?(0|[1-9][0-9]*)(\.[0-9]+)?) of the
// multiples of m, so that plain decimals minus it are exactly the others
// (not: {multipleOf}): integer m up to kMaxMultipleOf or a power of ten,
// and 10^-k; nullopt otherwise.
std::optional<Dfa> plain_multiples_dfa(const nlohmann::json& m);

// An object that allows only its declared names (no additional or
// pattern properties), and whether two objects declare no name in common.
bool closed_object(const GrammarNode& n);
// A name one of them gives no value (kNever) counts as absent.
bool names_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b);
// No JSON value satisfies both nodes (proven to a small depth; false when not).
bool values_disjoint(const Grammar& g, uint32_t x, uint32_t y);

// True when no JSON text can match two of the options (so anyOf enforces
// oneOf): told apart by first byte, or objects by a required property that
// the other forbids or whose values cannot coincide.
// `tick` runs per product state explored (a compile budget's check; it may throw).
bool branches_disjoint(const Grammar& g, const std::vector<uint32_t>& options,
                       const std::function<void()>& tick = {});

// Turns nodes that no finite JSON text satisfies (e.g. a required property
// that recurses forever) into kNever and drops references to them, so the
// matcher never accepts a prefix it cannot complete.
void prune_unproductive(Grammar& g);

// Code points of UTF-8 text (what minLength and maxLength count).
uint32_t code_points(const std::string& s);
// No two items of an array equal (JSON equality, 1 and 1.0 alike).
bool items_unique(const nlohmann::json& a);

}  // namespace nextok::constraint
