// %json in Lark grammars (llguidance's dialect): a JSON Schema compiled by
// the schema compiler, then written into the grammar IR as rules
// (docs/constraint-engine.md, "Lark").
#pragma once

#include <string_view>

#include "constraint/cfg/cfg_builder.hpp"

namespace nextok::constraint::cfg {

// The nonterminal of the JSON values `schema` (JSON text) accepts, written
// at byte `at` of the grammar. As llguidance reads %json: object properties
// in the order the schema text first names them, other keys after them, no
// whitespace before or after the value. Errors name line:column through b.
Symbol embed_json_schema(CfgBuilder& b, std::string_view schema, size_t at);

}  // namespace nextok::constraint::cfg
