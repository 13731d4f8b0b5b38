// The JSON Schema keywords the compiler reads as constraints.
#pragma once

namespace nextok::constraint {

// Keywords that constrain an instance besides enum and const: a branch with
// none of them only lists values (the rest are annotations or unknown).
inline constexpr const char* kConstraining[] = {"type",
                                                "multipleOf",
                                                "maximum",
                                                "exclusiveMaximum",
                                                "minimum",
                                                "exclusiveMinimum",
                                                "maxLength",
                                                "minLength",
                                                "pattern",
                                                "format",
                                                "maxItems",
                                                "minItems",
                                                "uniqueItems",
                                                "maxContains",
                                                "minContains",
                                                "contains",
                                                "maxProperties",
                                                "minProperties",
                                                "required",
                                                "dependentRequired",
                                                "dependencies",
                                                "properties",
                                                "patternProperties",
                                                "additionalProperties",
                                                "items",
                                                "prefixItems",
                                                "additionalItems",
                                                "propertyNames",
                                                "unevaluatedItems",
                                                "unevaluatedProperties",
                                                "allOf",
                                                "anyOf",
                                                "oneOf",
                                                "not",
                                                "if",
                                                "then",
                                                "else",
                                                "dependentSchemas",
                                                "$ref",
                                                "$dynamicRef",
                                                "$recursiveRef"};

}  // namespace nextok::constraint
