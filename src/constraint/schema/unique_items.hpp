// uniqueItems: true, enforced exactly where the items are a finite set of
// scalar values (an enum or const, booleans, null). Each value gets an id
// (< 63); the items become leaves whose DFA labels name the value, and the
// array frame keeps the set of ids read, as an object keeps its keys.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/schema/grammar.hpp"

namespace nextok::constraint {

// Most distinct values a uniqueItems array can track (Frame::seen bits).
inline constexpr size_t kMaxUniqueValues = 63;

// A regex for the spellings of number v that JSON Schema counts as equal:
// 2, 2.0 and 2.00 for an integer value; trailing zeros for a fraction;
// for large or fractional doubles every writer's text (number_texts), so
// 9007199254740992.0 is read as Python and nlohmann write it.
std::string number_spellings(const nlohmann::json& v, bool integral);

// The texts writers give a JSON number: nlohmann's dump, Python's repr
// (json.dumps) and, for an integral double, its exact digits.
std::vector<std::string> number_texts(const nlohmann::json& v);

// Whether a JSON number is integral (2, 2.0).
bool is_integral(const nlohmann::json& v);

// The distinct values (JSON equality: 1 == 1.0) among `candidates` that the
// compiled item node accepts; only scalars are looked at (its leaves).
std::vector<nlohmann::json> accepted_values(const Grammar& g, uint32_t node,
                                            const std::vector<nlohmann::json>& candidates);

// A leaf DFA over the spellings of some values, labels mapped to value ids.
struct ValueLeaf {
  Dfa dfa;
  std::vector<uint8_t> value_ids;  // label → value id
};
// One leaf for the string values, one for the others (numbers, booleans,
// null); either may be absent. `values` are distinct scalars.
std::vector<ValueLeaf> value_leaves(const std::vector<nlohmann::json>& values, size_t max_states);

}  // namespace nextok::constraint
