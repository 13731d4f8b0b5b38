// JSON text automata rewritten for the XML-style tool-call formats
// (XGrammar's qwen_xml, minimax_xml, glm_xml): a parameter's value is
// written raw, a string as its characters rather than a quoted literal.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "constraint/cfg/automaton_rules.hpp"

namespace nextok::constraint::cfg {

// Which of a value's raw texts (styles that mark strings apart, such as
// DeepSeek's string="true", take the two parts separately).
enum class RawPart : uint8_t { kAll, kStrings, kOthers };

// The raw texts of the JSON values `json` accepts: a value that is not a
// string as written (a number, true, an array), a string as its decoded
// characters, never holding `close` (the parameter's closing tag; empty:
// no such rule). A raw text that begins with a quote is a string's
// character, never a JSON string literal. nullopt when the automaton would
// pass `max_states`; no states when it accepts nothing.
std::optional<Automaton> raw_values(const Automaton& json, std::string_view close, size_t max_states,
                     RawPart part = RawPart::kAll);

// The keys `json_keys` accepts (JSON string literals, quotes included),
// decoded, that are also names [A-Za-z_][A-Za-z0-9_]* (what an XML-style
// parameter name may be when the schema does not declare it).
Automaton xml_names(const Automaton& json_keys);

}  // namespace nextok::constraint::cfg
