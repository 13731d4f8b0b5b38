// oneOf whose branches differ only in which properties they require
// ("exactly one of uses, run, wait"): each branch as "its keys present and
// no other branch's all present", an anyOf of disjoint branches.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace nextok::constraint {

// `branches` (a oneOf array) rewritten as {"anyOf": [...]} with the same
// instances, when every branch constrains an object by `required` alone
// (besides `type: object`, `properties` whose schemas accept anything, and
// annotations); nullopt otherwise. Non-objects satisfy every branch without
// a type, so they stay only when exactly one branch has none.
std::optional<nlohmann::json> one_of_by_required(const nlohmann::json& branches);

}  // namespace nextok::constraint
