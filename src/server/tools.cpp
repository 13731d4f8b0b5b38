#include "tools.hpp"

#include "call_scanner.hpp"

#include <atomic>
#include <cstdio>
#include <random>

#include "api_error.hpp"
#include "chat/formats.hpp"

namespace nextok::server {

namespace {

using ojson = nlohmann::ordered_json;

const ojson* field(const ojson& o, const char* name) {
  const auto it = o.find(name);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& param, const std::string& why,
                      const char* code = "invalid_value") {
  throw ApiError::bad_param(param, why, code);
}

const std::string& str(const ojson& v, const std::string& param) {
  if (!v.is_string()) bad(param, "'" + param + "' must be a string.", "invalid_type");
  return v.get_ref<const std::string&>();
}

// OpenAI's rule for function names.
bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

void dump_string(std::string& out, const std::string& s) {
  out += chat_detail::python_json_string(s);  // the escaping tojson writes
}

void dump_python(std::string& out, const ojson& v) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      if (!first) out += ", ";
      first = false;
      dump_string(out, k);
      out += ": ";
      dump_python(out, x);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      dump_python(out, v[i]);
    }
    out += ']';
  } else if (v.is_string()) {
    dump_string(out, v.get_ref<const std::string&>());
  } else if (v.is_boolean()) {
    out += v.get<bool>() ? "true" : "false";
  } else if (v.is_null()) {
    out += "null";
  } else if (v.is_number_float()) {
    // Python writes floats with a fraction or an exponent (1.0, 1e+20).
    std::string s = v.dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    out += s;
  } else {
    out += v.dump();
  }
}

ToolSpec parse_tool(const ojson& t, const std::string& at) {
  if (!t.is_object()) bad(at, "'" + at + "' must be an object.", "invalid_type");
  const ojson* type = field(t, "type");
  if (!type) bad(at + ".type", "a tool needs a 'type'.", "missing_required_parameter");
  if (str(*type, at + ".type") != "function")
    bad(at + ".type", "only 'function' tools are supported.", "unsupported_parameter");
  const ojson* fn = field(t, "function");
  if (!fn) bad(at + ".function", "a function tool needs 'function'.", "missing_required_parameter");
  if (!fn->is_object()) bad(at + ".function", "'function' must be an object.", "invalid_type");
  const ojson* name = field(*fn, "name");
  if (!name) bad(at + ".function.name", "a function needs a 'name'.", "missing_required_parameter");
  ToolSpec spec;
  spec.name = str(*name, at + ".function.name");
  if (!valid_name(spec.name))
    bad(at + ".function.name",
        "function names are 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'.");
  if (const ojson* d = field(*fn, "description")) str(*d, at + ".function.description");
  if (const ojson* p = field(*fn, "parameters")) {
    if (!p->is_object())
      bad(at + ".function.parameters", "'parameters' must be a JSON Schema object.",
          "invalid_type");
    spec.parameters = p->dump();
  } else {
    spec.parameters = R"({"type": "object", "properties": {}})";
  }
  if (const ojson* s = field(*fn, "strict")) {
    if (!s->is_boolean())
      bad(at + ".function.strict", "'strict' must be a boolean.", "invalid_type");
    spec.strict = s->get<bool>();
  }
  spec.rendered = python_json(t);
  return spec;
}

}  // namespace

std::string python_json(const ojson& v) {
  std::string out;
  dump_python(out, v);
  return out;
}

ToolRequest parse_tools(const ojson& body) {
  ToolRequest r;
  if (const ojson* t = field(body, "tools")) {
    if (!t->is_array()) bad("tools", "'tools' must be an array.", "invalid_type");
    if (t->size() > 256) bad("tools", "at most 256 tools are accepted.");
    for (std::size_t i = 0; i < t->size(); ++i) {
      ToolSpec spec = parse_tool((*t)[i], "tools[" + std::to_string(i) + "]");
      for (const ToolSpec& o : r.tools)
        if (o.name == spec.name)
          bad("tools[" + std::to_string(i) + "].function.name",
              "two tools are named '" + spec.name + "'.");
      r.tools.push_back(std::move(spec));
    }
  }
  if (const ojson* c = field(body, "tool_choice")) {
    if (c->is_string()) {
      const std::string& s = c->get_ref<const std::string&>();
      if (s == "none")
        r.choice = ToolChoice::kNone;
      else if (s == "auto")
        r.choice = ToolChoice::kAuto;
      else if (s == "required")
        r.choice = ToolChoice::kRequired;
      else
        bad("tool_choice", "unknown tool_choice '" + s + "' (none, auto, required or an object).");
    } else if (c->is_object()) {
      const ojson* type = field(*c, "type");
      if (!type || str(*type, "tool_choice.type") != "function")
        bad("tool_choice.type", "a named tool_choice has type 'function'.");
      const ojson* fn = field(*c, "function");
      const ojson* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
      if (!name)
        bad("tool_choice.function.name", "a named tool_choice needs function.name.",
            "missing_required_parameter");
      r.named = str(*name, "tool_choice.function.name");
      r.choice = ToolChoice::kNamed;
      bool known = false;
      for (const ToolSpec& t : r.tools) known = known || t.name == r.named;
      if (!known) bad("tool_choice.function.name", "no tool is named '" + r.named + "'.");
    } else {
      bad("tool_choice", "'tool_choice' must be a string or an object.", "invalid_type");
    }
    if (r.tools.empty() && r.choice != ToolChoice::kNone && r.choice != ToolChoice::kAuto)
      bad("tool_choice", "tool_choice needs 'tools'.");
  }
  if (const ojson* p = field(body, "parallel_tool_calls")) {
    if (!p->is_boolean())
      bad("parallel_tool_calls", "'parallel_tool_calls' must be a boolean.", "invalid_type");
    r.parallel = p->get<bool>();
  }
  return r;
}

std::string ToolRequest::call_schema() const {
  const std::string key = format == ToolFormat::kLlamaJson ? "\"parameters\"" : "\"arguments\"";
  std::string any;
  std::size_t n = 0;
  for (const ToolSpec& t : tools) {
    if (choice == ToolChoice::kNamed && t.name != named) continue;
    if (n++) any += ", ";
    any += R"({"type": "object", "properties": {"name": {"const": )" +
           nlohmann::json(t.name).dump() + "}, " + key + ": " + t.parameters +
           R"(}, "required": ["name", )" + key + R"(], "additionalProperties": false})";
  }
  return n == 1 ? any : "{\"anyOf\": [" + any + "]}";
}

bool ToolRequest::strict() const noexcept {
  for (const ToolSpec& t : tools)
    if (t.strict && (choice != ToolChoice::kNamed || t.name == named)) return true;
  return false;
}

namespace {

// Past leading whitespace and an optional <|python_tag|>: where a Llama 3.1
// call would begin.
std::string_view llama_call_start(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  std::string_view s = text.substr(std::min(text.find_first_not_of(kSpace), text.size()));
  if (s.starts_with(kPythonTag)) {
    s.remove_prefix(kPythonTag.size());
    s = s.substr(std::min(s.find_first_not_of(kSpace), s.size()));
  }
  return s;
}

ParsedOutput parse_llama_output(std::string_view text) {
  ParsedOutput out;
  const std::string_view s = llama_call_start(text);
  if (s.starts_with('{')) {
    try {
      const ojson call = ojson::parse(s);
      const ojson* name = call.is_object() ? field(call, "name") : nullptr;
      const ojson* args = call.is_object() ? field(call, "parameters") : nullptr;
      if (!args && call.is_object()) args = field(call, "arguments");
      const auto raw = raw_member(s, "parameters");
      if (name && name->is_string() && args && args->is_object() && raw) {
        out.calls.push_back({name->get<std::string>(), std::string(*raw)});
        return out;
      }
    } catch (const ojson::exception&) {
      // Not one complete object (cut by max_tokens, or text after it): text.
    }
  }
  out.content = std::string(text);
  return out;
}

}  // namespace

std::size_t call_start(std::string_view text, ToolFormat format) {
  if (format == ToolFormat::kHermes) {
    const std::size_t tag = text.find(kToolCallBegin);
    return tag == std::string_view::npos ? tag : tag + kToolCallBegin.size();
  }
  const std::string_view s = llama_call_start(text);
  return s.starts_with('{') ? text.size() - s.size() : std::string_view::npos;
}

std::size_t tool_text_safe_end(std::string_view text, ToolFormat format) {
  if (format == ToolFormat::kLlamaJson) {
    const std::string_view s = llama_call_start(text);
    // Undecided while blank, a prefix of the tag, or a call may be forming.
    if (s.empty() || s.starts_with('{') ||
        (s.size() < kPythonTag.size() && kPythonTag.starts_with(s)))
      return 0;
    return text.size();
  }
  const std::size_t tag = text.find(kToolCallBegin);
  if (tag != std::string_view::npos) return tag;
  for (std::size_t n = std::min(text.size(), kToolCallBegin.size() - 1); n > 0; --n)
    if (kToolCallBegin.starts_with(text.substr(text.size() - n))) return text.size() - n;
  return text.size();
}

ParsedOutput parse_tool_output(std::string_view text, ToolFormat format) {
  if (format == ToolFormat::kLlamaJson) return parse_llama_output(text);
  ParsedOutput out;
  const std::size_t first = text.find(kToolCallBegin);
  std::string_view before = text.substr(0, std::min(first, text.size()));
  std::size_t at = first;
  while (at != std::string_view::npos) {
    const std::size_t body = at + kToolCallBegin.size();
    const std::size_t end = text.find(kToolCallEnd, body);
    const std::string_view segment =
        text.substr(body, end == std::string_view::npos ? std::string_view::npos : end - body);
    ojson call;
    try {
      call = ojson::parse(segment);
    } catch (const ojson::exception&) {
      break;
    }
    const ojson* name = call.is_object() ? field(call, "name") : nullptr;
    const ojson* args = call.is_object() ? field(call, "arguments") : nullptr;
    const auto raw = raw_member(segment, "arguments");
    if (!name || !name->is_string() || !args || !raw) break;
    out.calls.push_back({name->get<std::string>(), std::string(*raw)});
    if (end == std::string_view::npos) break;
    at = text.find(kToolCallBegin, end + kToolCallEnd.size());
  }
  if (out.calls.empty()) before = text;  // no complete call: it is all text
  const bool blank = before.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (!blank || out.calls.empty()) {
    std::string_view c = before;
    if (!out.calls.empty()) c = c.substr(0, c.find_last_not_of(" \t\r\n") + 1);
    out.content = std::string(c);
  }
  return out;
}

std::string tool_call_id() {
  return random_id("call", '_');
}

}  // namespace nextok::server
