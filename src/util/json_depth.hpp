// How deeply a JSON text nests its arrays and objects, counted without
// parsing (brackets inside strings skipped). nlohmann's parser keeps its own
// stack, but later recursive walks (dump, the schema compiler, a structural
// tag's translation) do not: callers refuse absurd nesting up front.
#pragma once

#include <cstddef>
#include <string_view>

namespace nextok::util {

// The deepest nesting, or limit + 1 as soon as it passes limit.
inline std::size_t json_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace nextok::util
