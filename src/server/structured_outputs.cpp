#include "structured_outputs.hpp"

#include <string>

#include "api_error.hpp"
#include "request_fields.hpp"

namespace nextok::server {

namespace {

using nlohmann::json;
using namespace fields;  // NOLINT(google-build-using-namespace)

void set_format(ApiRequest& r, ResponseFormat f, const std::string& param) {
  if (r.format != ResponseFormat::kText) {
    throw ApiError::bad_param(param,
                              "only one output constraint may be set, but '" + param + "' and '" +
                                  r.format_param + "' both set one.",
                              "conflicting_parameters");
  }
  r.format = f;
  r.format_param = param;
}

// A schema as an object (or boolean), or as its JSON text (SGLang's form).
void set_schema(const json& v, const std::string& name, ApiRequest& r) {
  json schema;
  if (v.is_string()) {
    check_depth(v.get_ref<const std::string&>(), name, ("'" + name + "'").c_str());
    try {
      schema = json::parse(v.get_ref<const std::string&>());
    } catch (const json::exception& e) {
      throw ApiError::bad_param(name, "'" + name + "' is not valid JSON: " + e.what(),
                                "invalid_schema");
    }
  } else {
    schema = v;
  }
  if (!schema.is_object() && !schema.is_boolean())
    wrong_type(name, v, "a JSON schema (an object, or its JSON text)");
  set_format(r, ResponseFormat::kJsonSchema, name);
  r.schema = dump_json(schema);
}

void set_regex(const json& v, const std::string& name, ApiRequest& r) {
  r.grammar = string(v, name);
  set_format(r, ResponseFormat::kRegex, name);
}

void set_choice(const json& v, const std::string& name, ApiRequest& r) {
  if (!v.is_array()) wrong_type(name, v, "an array of strings");
  if (v.empty()) throw ApiError::bad_param(name, "'" + name + "' needs at least one string.");
  std::vector<std::string> choices;
  for (std::size_t i = 0; i < v.size(); ++i)
    choices.push_back(string(v[i], name + "[" + std::to_string(i) + "]"));
  set_format(r, ResponseFormat::kChoice, name);
  r.choices = std::move(choices);
}

// GBNF when the text defines a rule with "::=" (llama.cpp's and XGrammar's
// EBNF), else Lark; `gbnf` forces GBNF (SGLang's ebnf).
void set_grammar(const json& v, const std::string& name, ApiRequest& r, bool gbnf = false) {
  const std::string& text = string(v, name);
  gbnf = gbnf || text.find("::=") != std::string::npos;
  set_format(r, gbnf ? ResponseFormat::kGbnf : ResponseFormat::kLark, name);
  r.grammar = text;
}

// XGrammar's structural tag, as JSON text (vLLM's form) or as the object.
void set_structural_tag(const json& v, const std::string& name, ApiRequest& r) {
  if (!v.is_string() && !v.is_object())
    wrong_type(name, v, "a structural tag (an object, or its JSON text)");
  set_format(r, ResponseFormat::kStructuralTag, name);
  r.grammar = v.is_string() ? v.get<std::string>() : dump_json(v);
}

// Options that would change what is allowed: refused rather than ignored.
void refuse_if_true(const json& so, const char* key) {
  const std::string name = std::string("structured_outputs.") + key;
  if (const json* v = field(so, key); v && boolean(*v, name))
    unsupported(name, "'" + name +
                          "' is not supported (JSON whitespace and properties follow "
                          "the schema).");
}

void parse_vllm(const json& so, ApiRequest& r) {
  if (!so.is_object()) wrong_type("structured_outputs", so, "an object");
  for (const auto& [key, value] : so.items()) {
    const std::string name = "structured_outputs." + key;
    if (value.is_null()) continue;
    if (key == "json") {
      set_schema(value, name, r);
    } else if (key == "regex") {
      set_regex(value, name, r);
    } else if (key == "choice") {
      set_choice(value, name, r);
    } else if (key == "grammar") {
      set_grammar(value, name, r);
    } else if (key == "json_object") {
      if (boolean(value, name)) set_format(r, ResponseFormat::kJsonObject, name);
    } else if (key == "disable_fallback") {
      boolean(value, name);  // there is no other backend to fall back to
    } else if (key == "whitespace_pattern") {
      unsupported(name, "'" + name + "' is not supported.");
    } else if (key == "structural_tag") {
      set_structural_tag(value, name, r);
    } else if (key != "disable_any_whitespace" && key != "disable_additional_properties") {
      throw ApiError::bad_param(name, "unknown field '" + name +
                                          "' (json, regex, choice, grammar, json_object, "
                                          "structural_tag, disable_fallback).");
    }
  }
  refuse_if_true(so, "disable_any_whitespace");
  refuse_if_true(so, "disable_additional_properties");
}

}  // namespace

void parse_structured_outputs(const json& body, ApiRequest& r) {
  if (const json* so = field(body, "structured_outputs")) parse_vllm(*so, r);
  // vLLM's earlier fields.
  if (const json* v = field(body, "guided_json")) set_schema(*v, "guided_json", r);
  if (const json* v = field(body, "guided_regex")) set_regex(*v, "guided_regex", r);
  if (const json* v = field(body, "guided_choice")) set_choice(*v, "guided_choice", r);
  if (const json* v = field(body, "guided_grammar")) set_grammar(*v, "guided_grammar", r);
  if (const json* v = field(body, "guided_decoding_backend"))
    string(*v, "guided_decoding_backend");  // one engine serves every backend's name
  if (const json* v = field(body, "guided_whitespace_pattern")) {
    string(*v, "guided_whitespace_pattern");
    unsupported("guided_whitespace_pattern", "'guided_whitespace_pattern' is not supported.");
  }
  // SGLang's and llama.cpp's.
  if (const json* v = field(body, "regex")) set_regex(*v, "regex", r);
  if (const json* v = field(body, "ebnf")) set_grammar(*v, "ebnf", r, true);
  if (const json* v = field(body, "grammar")) set_grammar(*v, "grammar", r);
  if (const json* v = field(body, "json_schema")) set_schema(*v, "json_schema", r);
  if (const json* v = field(body, "structural_tag")) set_structural_tag(*v, "structural_tag", r);
}

}  // namespace nextok::server
