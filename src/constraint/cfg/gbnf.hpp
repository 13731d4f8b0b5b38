// GBNF, llama.cpp's grammar format, parsed the way llama.cpp parses it
// (docs/constraint-engine.md, "Grammars"), into the grammar IR.
#pragma once

#include <string_view>

#include "constraint/cfg/cfg.hpp"
#include "constraint/cfg/cfg_builder.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/vocab.hpp"

namespace nextok::constraint::cfg {

// Throws Error{kInvalidArgument, "grammar"} with "line:column: what" for a
// syntax error, an undefined rule or a missing `root`, and when the grammar
// outgrows `limits` (max_grammar_nodes, max_compile_ms, cancel). Token
// references (<[id]>, <text>, !<...>) need `vocab`.
Cfg parse_gbnf(std::string_view text, const ConstraintLimits& limits,
               const Vocabulary* vocab = nullptr);

// %gbnf {"grammar": "root ::= ...", "name": ...} in a Lark grammar
// (nextok's own directive; structural tags' `grammar` format): the GBNF
// grammar's rules added to b, its root returned. Errors name the optional
// "name" (else line:column of the Lark text), then the GBNF text's place.
Symbol embed_gbnf(CfgBuilder& b, std::string_view object_json, size_t at, const Vocabulary* vocab);

// Appends to `g` a nonterminal deriving exactly the UTF-8 encodings of the
// code points in `set` (sorted disjoint inclusive ranges).
uint32_t add_code_point_class(Cfg& g, const std::vector<std::pair<uint32_t, uint32_t>>& set,
                              std::string name);

}  // namespace nextok::constraint::cfg
