// JSON Schema (draft 2020-12, with the draft-4/7 spellings seen in the
// wild) → grammar IR. See docs/constraint-engine.md for what is enforced and
// how: property order, oneOf, whitespace, unsupported keywords.
#pragma once

#include <atomic>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "constraint/schema/grammar.hpp"
#include "constraint/schema/standard_dfas.hpp"
#include "nextok/json_schema.hpp"

namespace nextok::constraint {

struct SchemaCompileOptions {
  // Strict: a keyword that would constrain the output but is not enforced
  // is an error. Lenient: it is ignored and reported in `warnings`.
  bool strict = true;
  uint8_t max_whitespace = 20;
  size_t max_nodes = 50000;                   // grammar nodes
  size_t max_dfa_states = 200000;             // all DFAs together
  size_t max_enum_values = 100000;            // enum/const values in one schema
  size_t max_depth = 128;                     // nesting of subschemas being compiled
  uint32_t max_compile_ms = 0;                // wall-clock budget; 0 = none
  const std::atomic<bool>* cancel = nullptr;  // set: stop at the next budget check

  // The sizes, time and cancel flag of a compile's ConstraintLimits.
  static SchemaCompileOptions limited_by(const ConstraintLimits& limits) {
    SchemaCompileOptions so;
    so.max_nodes = limits.max_grammar_nodes;
    so.max_dfa_states = limits.max_dfa_states;
    so.max_enum_values = limits.max_enum_values;
    so.max_depth = limits.max_schema_depth;
    so.max_compile_ms = limits.max_compile_ms;
    so.cancel = limits.cancel;
    return so;
  }
};

struct CompiledSchema {
  Grammar grammar;
  std::vector<std::string> warnings;  // lenient mode: what was ignored, with where
};

// Throws Error{kInvalidArgument, "<JSON pointer>"} for malformed schemas and
// Error{kUnsupported, "<JSON pointer>"} for keywords that cannot be enforced
// (strict mode).
CompiledSchema compile_json_schema(const nlohmann::json& schema, const SchemaCompileOptions& opt,
                                   const StandardDfas& std_dfas);

// Any JSON value (object_only: any JSON object), for response_format
// json_object.
Grammar any_json_grammar(bool object_only, uint8_t max_whitespace, const StandardDfas& std_dfas);

}  // namespace nextok::constraint
