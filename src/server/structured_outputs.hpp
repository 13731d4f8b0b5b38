// Constraints beyond response_format, as the servers our users come from
// take them, so that their clients work unchanged:
//   vLLM     structured_outputs: {json | regex | choice | grammar | json_object |
//            structural_tag} and the older guided_json / guided_regex /
//            guided_choice / guided_grammar;
//   SGLang   regex, ebnf, json_schema (a schema as JSON text), structural_tag;
//   llama.cpp grammar (GBNF), json_schema (an object).
// A grammar holding "::=" is GBNF (XGrammar's EBNF reads the same), any
// other is Lark (llguidance's dialect). At most one constraint per request.
#pragma once
#include <nlohmann/json.hpp>

#include "request.hpp"

namespace nextok::server {

// Throws ApiError (400) naming the field: wrong types, two constraints,
// options nextok does not honour.
void parse_structured_outputs(const nlohmann::json& body, ApiRequest& r);

}  // namespace nextok::server
