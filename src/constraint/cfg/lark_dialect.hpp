// What llguidance's Lark dialect adds to lark's syntax, read apart from the
// rest (docs/constraint-engine.md, "llguidance's dialect").
#pragma once

#include <string>
#include <string_view>

namespace nextok::constraint::cfg::lark {

// Whether the '{' at src[pos] opens a count ({m,n}, {m,}, {,n}, {n}):
// digits, spaces and at most one comma, where a template's arguments would
// hold names or strings.
bool is_count_brace(std::string_view src, size_t pos);

// One past the '}' that closes the JSON object whose '{' is at src[pos]
// (strings and nested brackets skipped), or npos when it never closes.
size_t json_object_end(std::string_view src, size_t pos);

// Why `%llguidance {options}` cannot be honoured here, or "" when every
// option keeps the language (unknown ones are ignored, as llguidance does).
std::string llguidance_options_error(std::string_view options);

}  // namespace nextok::constraint::cfg::lark
