// The developer message's "# Tools" section of the gpt-oss template: each
// function as a TypeScript-like type in `namespace functions`, its
// parameters' JSON Schema turned into types the way the template's
// render_typescript_type macro does, whitespace included (transformers
// renders with trim_blocks and lstrip_blocks, so a few `{{ }}` keep the
// indentation before them). Where the template would fail (a tool without
// a description, a non-string enum default), this throws kInvalidArgument.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok::chat_detail {
namespace {

using ojson = nlohmann::ordered_json;

// Jinja attribute access on a mapping: the item, or "undefined" (nullptr).
const ojson* get(const ojson& o, const char* key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

// Jinja truthiness.
bool truthy(const ojson* v) {
  if (!v || v->is_null()) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number()) return v->get<double>() != 0.0;
  if (v->is_string()) return !v->get_ref<const std::string&>().empty();
  return !v->empty();
}

bool is(const ojson* v, std::string_view s) {
  return v && v->is_string() && v->get_ref<const std::string&>() == s;
}

[[noreturn]] void fail(const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "tools", "the gpt-oss template cannot render " + why);
}

// `"text" + value` in the template: strings only (Python refuses the rest).
const std::string& text(const ojson* v, const std::string& what) {
  if (!v || !v->is_string()) fail(what + " (not a string)");
  return v->get_ref<const std::string&>();
}

// Jinja's `str()` of a JSON value inside `join`.
std::string py_str(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return python_json(v);
}

bool listed(const ojson* required, const std::string& name) {
  if (!truthy(required) || !required->is_array()) return false;
  for (const ojson& r : *required)
    if (r.is_string() && r.get_ref<const std::string&>() == name) return true;
  return false;
}

std::string ts_type(const ojson& spec, const ojson* required);

std::string array_type(const ojson& spec, const ojson* required) {
  std::string out;
  const ojson* items = get(spec, "items");
  if (truthy(items)) {
    const ojson* it = get(*items, "type");
    if (is(it, "string")) {
      out = "string[]";
    } else if (is(it, "number") || is(it, "integer")) {
      out = "number[]";
    } else if (is(it, "boolean")) {
      out = "boolean[]";
    } else {
      const std::string inner = ts_type(*items, required);
      out = inner == "object | object" || inner.size() > 50 ? "any[]" : inner + "[]";
    }
  } else {
    out = "any[]";
  }
  if (truthy(get(spec, "nullable"))) out += " | null";
  return out;
}

// oneOf: the template's has_object_variants is set inside its loop, where a
// Jinja `set` does not reach the outer scope: every oneOf is a union.
std::string one_of_type(const ojson& variants, const ojson* required) {
  std::string out;
  for (size_t i = 0; i < variants.size(); ++i) {
    const ojson& v = variants[i];
    out += ts_type(v, required);
    if (const ojson* d = get(v, "description"); truthy(d)) out += "// " + text(d, "a description");
    if (const ojson* d = get(v, "default"))
      out += "                    // default: " + python_json(*d);
    if (i + 1 < variants.size()) out += " | \n";
  }
  return out;
}

std::string object_type(const ojson& spec) {
  const ojson* props = get(spec, "properties");
  if (!truthy(props) || !props->is_object()) return "object";
  const ojson* required = get(spec, "required");
  std::string out = "{\n";
  size_t i = 0;
  for (const auto& [name, prop] : props->items()) {
    out += name;
    if (!listed(required, name)) out += '?';
    out += ": \n                ";
    out += ts_type(prop, required);
    if (++i < props->size()) out += ", ";
  }
  return out + "}";
}

std::string ts_type(const ojson& spec, const ojson* required) {
  const ojson* type = get(spec, "type");
  if (is(type, "array")) return array_type(spec, required);
  if (type && type->is_array() && !type->empty()) {
    std::string out;
    for (size_t i = 0; i < type->size(); ++i) out += (i ? " | " : "") + py_str((*type)[i]);
    return out;
  }
  if (const ojson* one = get(spec, "oneOf"); truthy(one)) {
    if (!one->is_array()) fail("a oneOf that is not a list");
    return one_of_type(*one, required);
  }
  if (is(type, "string")) {
    if (const ojson* e = get(spec, "enum"); truthy(e)) {
      if (!e->is_array()) fail("an enum that is not a list");
      std::string out = "\"";
      for (size_t i = 0; i < e->size(); ++i) out += (i ? "\" | \"" : "") + py_str((*e)[i]);
      return out + "\"";
    }
    return truthy(get(spec, "nullable")) ? "string | null" : "string";
  }
  if (is(type, "number") || is(type, "integer")) return "number";
  if (is(type, "boolean")) return "boolean";
  if (is(type, "object")) return object_type(spec);
  return "any";
}

void append_function(std::string& out, const ojson& tool) {
  const ojson* fn = get(tool, "function");
  if (!fn) fail("a tool without 'function'");
  const ojson* name = get(*fn, "name");
  out += "// " + text(get(*fn, "description"), "a function without a description") + "\n";
  out += "type " + text(name, "a function without a name") + " = ";
  const ojson* params = get(*fn, "parameters");
  const ojson* props = params ? get(*params, "properties") : nullptr;
  if (!truthy(params) || !truthy(props) || !props->is_object()) {
    out += "() => any;\n\n";
    return;
  }
  const ojson* required = get(*params, "required");
  out += "(_: {\n";
  for (const auto& [pname, spec] : props->items()) {
    if (const ojson* d = get(spec, "description"); truthy(d))
      out += "// " + text(d, "a parameter description") + "\n";
    out += pname;
    if (!listed(required, pname)) out += '?';
    out += ": ";
    out += ts_type(spec, required);
    if (const ojson* def = get(spec, "default")) {
      if (truthy(get(spec, "enum")))
        out += ", // default: " + text(def, "an enum default");
      else if (truthy(get(spec, "oneOf")))
        out += "// default: " + text(def, "a oneOf default");
      else
        out += ", // default: " + python_json(*def);
    }
    out += ",\n";
  }
  out += "}) => any;\n\n";
}

}  // namespace

std::string harmony_tools_namespace(std::span<const std::string> tools) {
  std::string out = "## functions\n\nnamespace functions {\n\n";
  for (const std::string& t : tools) {
    ojson tool;
    try {
      tool = ojson::parse(t);
    } catch (const ojson::exception& e) {
      throw Error(ErrorCode::kInvalidArgument, "tools",
                  std::string("a tool is not JSON: ") + e.what());
    }
    append_function(out, tool);
  }
  return out + "} // namespace functions";
}

}  // namespace nextok::chat_detail
