// %json in Lark grammars (llguidance's dialect): a JSON Schema compiled by
// the schema compiler, then written into the grammar IR as rules
// (docs/constraint-engine.md, "Lark").
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "constraint/cfg/cfg_builder.hpp"

namespace nextok::constraint {
class Dfa;
}

namespace nextok::constraint::cfg {

// What the %json rules of one grammar share: each leaf DFA's rules (a
// hundred tools' string, enum and integer leaves are the same DFAs), kept
// with the DFA so that its address stays its own.
struct JsonEmbedCache {
  // (DFA, character bounds, -1 for JSON text or the raw part, the style's
  // closing tag)
  using Key = std::tuple<const Dfa*, uint32_t, uint32_t, int, std::string>;
  std::map<Key, std::pair<std::shared_ptr<const Dfa>, std::optional<Symbol>>> leaves;
};

// The nonterminal of the JSON values `schema` (JSON text) accepts, written
// at byte `at` of the grammar. As llguidance reads %json: object properties
// in the order the schema text first names them, other keys after them, no
// whitespace before or after the value. Errors name line:column through b.
Symbol embed_json_schema(CfgBuilder& b, std::string_view schema, size_t at, JsonEmbedCache& cache);

}  // namespace nextok::constraint::cfg
