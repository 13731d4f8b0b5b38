// Lark grammars (docs/constraint-engine.md, "Lark") into the grammar IR.
// The language is the one lark's Earley parser accepts with the
// dynamic_complete lexer: terminals are read at the character level, every
// split of the text into terminals that the rules allow counts, regex
// terminals are Python `re` patterns read as regular languages, and
// %ignore'd terminals may stand before any terminal of a rule and at the
// end, each its longest match (it ends where the next byte cannot continue
// it), as lark's lexer takes them.
#pragma once

#include <string_view>

#include "constraint/cfg/cfg.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {
class Vocabulary;
}

namespace nextok::constraint::cfg {

// The root is the rule `start`. llguidance's dialect is read too (%json,
// %llguidance, {m,n}, lazy, suffix and stop rules, & and ~ terminals,
// %regex substrings, special tokens: docs/constraint-engine.md). Throws
// Error{kInvalidArgument, "grammar"} with "line:column: what" for a syntax
// error, an undefined or twice defined name, a recursive terminal, a
// missing `start` and what is not supported (imports from other modules
// than `common`, @references, the max_tokens/temperature options);
// Error{kUnsupported or kInvalidArgument, "pattern"} for a regex a DFA
// cannot express; and the ConstraintLimits errors (max_grammar_nodes,
// max_compile_ms, cancel). `vocab` resolves special tokens (<|eot_id|>,
// <[128009]>); without one they are an error.
Cfg parse_lark(std::string_view text, const ConstraintLimits& limits,
               const Vocabulary* vocab = nullptr);

}  // namespace nextok::constraint::cfg
