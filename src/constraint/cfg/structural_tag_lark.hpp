// XGrammar's structural tags (the JSON that vLLM's and SGLang's
// `structural_tag` requests carry) read as a Lark grammar in the dialect
// Grammar::lark compiles: each format a rule, free text a terminal built with
// `&` and `~` (text that holds no trigger, no excluded string, no end tag),
// JSON content a `%json` rule. docs/constraint-engine.md ("Structural tags")
// lists the formats and what each becomes.
#pragma once

#include <string>
#include <string_view>

namespace nextok::constraint::cfg {

// Both shapes: {"type": "structural_tag", "format": {...}} and the older
// {"type": "structural_tag", "structures": [{begin, schema, end}],
// "triggers": [...]}. Throws Error{kInvalidArgument, "structural_tag"} for
// malformed input and Error{kUnsupported, "structural_tag"} for formats
// nextok does not read (token formats, regex and grammar content, XML
// styles, token and character budgets), naming the format's path.
std::string structural_tag_to_lark(std::string_view json_text);

}  // namespace nextok::constraint::cfg
