// Unicode property classes for \p{...} and \P{...}: the general categories
// (ECMA-262's u-mode names, long and short, also as gc=X and
// General_Category=X) and the binary properties Any, ASCII and Assigned.
// Names match loosely, as Rust's and Python's regex engines read them
// (case, spaces, '_' and '-' ignored); every ECMA-262 spelling is among them.
#pragma once

#include <optional>
#include <string_view>

#include "constraint/regex/regex_parser.hpp"

namespace nextok::constraint::regex {

// The code points of the property `name` (the text between the braces), or
// nullopt for a name this table does not know (a script, say).
std::optional<CodeSet> unicode_property(std::string_view name);

}  // namespace nextok::constraint::regex
