#include "constraint/cfg/lark_dialect.hpp"

#include <nlohmann/json.hpp>

namespace nextok::constraint::cfg::lark {

bool is_count_brace(std::string_view src, size_t pos) {
  size_t digits = 0, commas = 0;
  for (size_t k = pos + 1; k < src.size() && src[k] != '}'; ++k) {
    const char c = src[k];
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == ',') {
      ++commas;
    } else if (c != ' ') {
      return false;
    }
  }
  return digits > 0 && commas <= 1;
}

size_t json_object_end(std::string_view src, size_t pos) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t k = pos; k < src.size(); ++k) {
    const char c = src[k];
    if (in_string) {
      if (c == '\\') {
        ++k;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return k + 1;
    }
  }
  return std::string_view::npos;
}

std::string llguidance_options_error(std::string_view options) {
  nlohmann::json opts;
  try {
    opts = nlohmann::json::parse(options);
  } catch (const nlohmann::json::exception&) {
    return "%llguidance needs a JSON object of options";
  }
  for (const auto& [k, v] : opts.items()) {
    const bool off = v.is_boolean() && !v.get<bool>();
    // No token is forced here; UTF-8 is enforced; ignored runs repeat.
    if (k == "no_forcing" || (k == "allow_invalid_utf8" && off) ||
        (k == "skip_repetition" && v == "repeat")) {
      continue;
    }
    if (k == "allow_invalid_utf8" || k == "skip_repetition") {
      return "the %llguidance option " + k + "=" + v.dump() + " is not supported";
    }
  }
  return {};
}

}  // namespace nextok::constraint::cfg::lark
