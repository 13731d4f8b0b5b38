// The JSON Schema draft a document declares ($schema), and the keywords a
// draft does not define: validators read those as annotations, so a draft-04
// document's `propertyNames` or `const` constrains nothing there, and up to
// draft 07 a `$ref` replaces the keywords beside it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace nextok::constraint {

enum class Draft { k3, k4, k6, k7, k2019, k2020, kUndeclared };

// From the root's $schema URI; kUndeclared when there is none or it is not
// one of the JSON Schema metaschemas.
Draft declared_draft(const nlohmann::json& root);

// A copy of the document without the keywords its declared draft does not
// define, and, in drafts up to 07, without the keywords beside a $ref (which
// those drafts ignore), at every schema position reached through the
// applicator keywords;
// nullopt when none occurs, or when the document declares 2019-09, 2020-12
// or no draft (then every keyword of every draft is read, `dependencies`
// included).
std::optional<nlohmann::json> without_undefined_keywords(const nlohmann::json& root);

}  // namespace nextok::constraint
