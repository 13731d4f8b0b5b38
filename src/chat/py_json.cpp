// Python's json.dumps with ensure_ascii=False, the default separators and
// keys in their order: what transformers' `tojson` writes into templates.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "chat/formats.hpp"

namespace nextok::chat_detail {

std::string python_json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string python_json(const nlohmann::ordered_json& v) {
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += python_json_string(k) + ": " + python_json(x);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + python_json(v[i]);
    return out + "]";
  }
  if (v.is_string()) return python_json_string(v.get_ref<const std::string&>());
  if (v.is_number_float()) {
    // Python writes floats with a fraction or an exponent (1.0, 1e+20).
    std::string s = v.dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }
  return v.dump();  // integers, true, false, null
}

}  // namespace nextok::chat_detail
