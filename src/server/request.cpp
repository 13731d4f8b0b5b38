#include "request.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "api_error.hpp"
#include "request_fields.hpp"
#include "structured_outputs.hpp"

namespace nextok::server {

namespace {

using nlohmann::json;
using namespace fields;  // NOLINT(google-build-using-namespace)

// Message content: a string or an array of text parts.
std::string content_text(const json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) wrong_type(name, v, "a string or an array of content parts");
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pn = name + "[" + std::to_string(i) + "]";
    const json& part = v[i];
    if (!part.is_object()) wrong_type(pn, part, "an object");
    const json* type = field(part, "type");
    if (!type) throw ApiError::bad_param(pn + ".type", "a content part needs a 'type'.");
    if (string(*type, pn + ".type") != "text")
      unsupported(pn + ".type", "only text content parts are supported.");
    const json* text = field(part, "text");
    if (!text) throw ApiError::bad_param(pn + ".text", "a text part needs 'text'.");
    out += string(*text, pn + ".text");
  }
  return out;
}

// An assistant turn's earlier calls: [{id, type: "function", function:
// {name, arguments (JSON text)}}].
void parse_history_calls(const json& v, const std::string& name, ChatMessage& msg) {
  if (!v.is_array()) wrong_type(name, v, "an array");
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::string at = name + "[" + std::to_string(k) + "]";
    const json& c = v[k];
    if (!c.is_object()) wrong_type(at, c, "an object");
    const json* fn = field(c, "function");
    if (!fn) throw ApiError::bad_param(at + ".function", "a tool call needs 'function'.");
    if (!fn->is_object()) wrong_type(at + ".function", *fn, "an object");
    const json* n = field(*fn, "name");
    if (!n) throw ApiError::bad_param(at + ".function.name", "a tool call needs a name.");
    ChatToolCall call{string(*n, at + ".function.name"), "{}"};
    if (const json* a = field(*fn, "arguments")) {
      // The template writes a string verbatim and an object as JSON.
      call.arguments = a->is_string() ? a->get<std::string>() : dump_json(*a);
    }
    msg.tool_calls.push_back(std::move(call));
  }
}

void parse_messages(const json& body, ApiRequest& r, const RequestLimits& limits) {
  const json* msgs = field(body, "messages");
  if (!msgs)
    throw ApiError::bad_param("messages", "'messages' is required.", "missing_required_parameter");
  if (!msgs->is_array()) wrong_type("messages", *msgs, "an array");
  if (msgs->empty()) throw ApiError::bad_param("messages", "'messages' must not be empty.");
  if (msgs->size() > limits.max_messages) {
    throw ApiError::bad_param(
        "messages", "at most " + std::to_string(limits.max_messages) + " messages are accepted.");
  }
  for (std::size_t i = 0; i < msgs->size(); ++i) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    const json& m = (*msgs)[i];
    if (!m.is_object()) wrong_type(name, m, "an object");
    const json* role = field(m, "role");
    if (!role) throw ApiError::bad_param(name + ".role", "every message needs a 'role'.");
    std::string rl = string(*role, name + ".role");
    if (rl == "developer") rl = "system";
    if (rl == "function")
      unsupported(name + ".role", "function messages are not supported; use tool messages.");
    if (rl != "system" && rl != "user" && rl != "assistant" && rl != "tool") {
      throw ApiError::bad_param(
          name + ".role",
          "unknown role '" + rl + "' (system, developer, user, assistant or tool).");
    }
    ChatMessage msg{rl, {}, std::nullopt, {}};
    if (const json* c = field(m, "content"))
      msg.content = content_text(*c, name + ".content");
    else if (rl != "assistant")
      throw ApiError::bad_param(name + ".content", "'content' is required.");
    if (const json* rc = field(m, "reasoning_content"))
      msg.reasoning_content = string(*rc, name + ".reasoning_content");
    if (const json* tc = field(m, "tool_calls")) {
      if (rl != "assistant")
        throw ApiError::bad_param(name + ".tool_calls", "only assistant messages make tool calls.");
      parse_history_calls(*tc, name + ".tool_calls", msg);
    }
    if (const json* id = field(m, "tool_call_id")) string(*id, name + ".tool_call_id");
    r.messages.push_back(std::move(msg));
  }
  if (const json* kw = field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) wrong_type("chat_template_kwargs", *kw, "an object");
    if (const json* et = field(*kw, "enable_thinking"))
      r.enable_thinking = boolean(*et, "chat_template_kwargs.enable_thinking");
    if (const json* tu = field(*kw, "tools_in_user_message"))
      r.tools_in_user_message = boolean(*tu, "chat_template_kwargs.tools_in_user_message");
    if (const json* bt = field(*kw, "builtin_tools")) {
      const std::string name = "chat_template_kwargs.builtin_tools";
      if (!bt->is_array()) wrong_type(name, *bt, "an array of tool names");
      std::vector<std::string> names;
      for (size_t i = 0; i < bt->size(); ++i)
        names.push_back(string((*bt)[i], name + "[" + std::to_string(i) + "]"));
      r.builtin_tools = std::move(names);
    }
  }
}

std::int32_t token_id(const json& v, const std::string& name) {
  return static_cast<std::int32_t>(integer(v, name, 0, std::numeric_limits<std::int32_t>::max()));
}

void parse_prompt(const json& body, ApiRequest& r) {
  const json* p = field(body, "prompt");
  if (!p)
    throw ApiError::bad_param("prompt", "'prompt' is required.", "missing_required_parameter");
  const json* one = p;
  if (p->is_array() && !p->empty() && (p->front().is_string() || p->front().is_array())) {
    if (p->size() != 1) unsupported("prompt", "one prompt per request is supported.");
    one = &p->front();
  }
  if (one->is_string()) {
    r.prompt = one->get<std::string>();
    if (r.prompt.empty()) throw ApiError::bad_param("prompt", "'prompt' must not be empty.");
  } else if (one->is_array()) {
    if (one->empty()) throw ApiError::bad_param("prompt", "'prompt' must not be empty.");
    r.prompt_is_ids = true;
    for (std::size_t i = 0; i < one->size(); ++i)
      r.prompt_ids.push_back(token_id((*one)[i], "prompt[" + std::to_string(i) + "]"));
  } else {
    wrong_type("prompt", *one, "a string or an array of token ids");
  }
}

void parse_stop(const json& body, ApiRequest& r, const RequestLimits& limits) {
  const json* s = field(body, "stop");
  if (!s) return;
  auto add = [&](const json& v, const std::string& name) {
    const std::string& text = string(v, name);
    if (text.empty()) throw ApiError::bad_param(name, "stop strings must not be empty.");
    if (text.size() > 1024) throw ApiError::bad_param(name, "stop strings are at most 1024 bytes.");
    r.stop.push_back(text);
  };
  if (s->is_string()) {
    add(*s, "stop");
  } else if (s->is_array()) {
    if (s->size() > limits.max_stop) {
      throw ApiError::bad_param(
          "stop", "at most " + std::to_string(limits.max_stop) + " stop strings are accepted.");
    }
    for (std::size_t i = 0; i < s->size(); ++i) add((*s)[i], "stop[" + std::to_string(i) + "]");
  } else {
    wrong_type("stop", *s, "a string or an array of strings");
  }
}

// A logit_bias key: the canonical decimal spelling of an id in [0, 2^31), so
// that each token has exactly one key (" 1", "+1", "01" are not ids).
std::optional<std::int32_t> token_id_key(const std::string& key) {
  if (key.empty() || (key[0] == '0' && key.size() > 1) || key[0] < '0' || key[0] > '9')
    return std::nullopt;
  std::int32_t id = 0;
  const char* end = key.data() + key.size();
  const auto [p, ec] = std::from_chars(key.data(), end, id);
  if (ec != std::errc{} || p != end) return std::nullopt;
  return id;
}

void parse_sampling(const json& body, ApiRequest& r, const RequestLimits& limits) {
  r.sampler.temperature = 1.0f;
  if (const json* v = field(body, "temperature"))
    r.sampler.temperature = static_cast<float>(number(*v, "temperature", 0.0, 2.0));
  // top_p 0 and 1 are both "off" (mlx-lm's default is 0); OpenAI's range.
  if (const json* v = field(body, "top_p"))
    r.sampler.top_p = static_cast<float>(number(*v, "top_p", 0.0, 1.0));
  if (const json* v = field(body, "top_k")) {
    const auto k = integer(*v, "top_k", -1, std::numeric_limits<std::int32_t>::max());
    r.sampler.top_k = k <= 0 ? 0 : static_cast<std::int32_t>(k);
  }
  if (const json* v = field(body, "min_p"))
    r.sampler.min_p = static_cast<float>(number(*v, "min_p", 0.0, 1.0));
  if (const json* v = field(body, "seed")) {
    if (v->is_number_unsigned())
      r.sampler.seed = v->get<std::uint64_t>();
    else
      r.sampler.seed =
          static_cast<std::uint64_t>(integer(*v, "seed", std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max()));
  }
  if (const json* v = field(body, "repetition_penalty")) {
    r.penalties.repetition_penalty =
        static_cast<float>(number(*v, "repetition_penalty", 0.0, 10.0));
    if (r.penalties.repetition_penalty <= 0.0f)
      throw ApiError::bad_param("repetition_penalty",
                                "'repetition_penalty' must be greater than 0.", "out_of_range");
  }
  if (const json* v = field(body, "presence_penalty"))
    r.penalties.presence_penalty = static_cast<float>(number(*v, "presence_penalty", -2.0, 2.0));
  if (const json* v = field(body, "frequency_penalty"))
    r.penalties.frequency_penalty = static_cast<float>(number(*v, "frequency_penalty", -2.0, 2.0));
  if (const json* v = field(body, "logit_bias")) {
    if (!v->is_object()) wrong_type("logit_bias", *v, "an object of token id → bias");
    if (v->size() > limits.max_logit_bias) {
      throw ApiError::bad_param("logit_bias", "at most " + std::to_string(limits.max_logit_bias) +
                                                  " logit_bias entries are accepted.");
    }
    for (const auto& [key, bias] : v->items()) {
      const std::string name = "logit_bias." + key;
      const std::optional<std::int32_t> id = token_id_key(key);
      if (!id) {
        throw ApiError::bad_param("logit_bias", "logit_bias key '" + key +
                                                    "' is not a token id (a decimal integer "
                                                    "without sign, spaces or leading zeros).");
      }
      const float b = static_cast<float>(number(bias, name, -100.0, 100.0));
      r.penalties.logit_bias.emplace_back(*id, b);
    }
  }
}

void parse_logprobs(const json& body, ApiRequest& r) {
  if (r.endpoint == Endpoint::kChat) {
    if (const json* v = field(body, "logprobs")) r.logprobs = boolean(*v, "logprobs");
    if (const json* v = field(body, "top_logprobs")) {
      r.top_logprobs = static_cast<std::uint32_t>(integer(*v, "top_logprobs", 0, kMaxTopLogprobs));
      if (!r.logprobs)
        throw ApiError::bad_param("top_logprobs", "'top_logprobs' needs 'logprobs' set to true.");
    }
  } else if (const json* v = field(body, "logprobs")) {
    r.logprobs = true;
    r.top_logprobs = static_cast<std::uint32_t>(integer(*v, "logprobs", 0, kMaxTopLogprobs));
  }
  // The chosen token's logprob comes with the top-k computation; k >= 1.
  if (r.logprobs) r.sampler.top_logprobs_k = std::max<std::uint32_t>(r.top_logprobs, 1);
}

void parse_response_format(const json& body, ApiRequest& r) {
  const json* rf = field(body, "response_format");
  if (!rf) return;
  if (!rf->is_object()) wrong_type("response_format", *rf, "an object");
  const json* type = field(*rf, "type");
  if (!type) throw ApiError::bad_param("response_format.type", "'response_format' needs a 'type'.");
  const std::string& t = string(*type, "response_format.type");
  if (t == "text") return;
  if (t == "json_object") {
    r.format = ResponseFormat::kJsonObject;
    r.format_param = "response_format";
    return;
  }
  if (t == "structural_tag") {  // vLLM's: the object itself is XGrammar's structural tag
    r.format = ResponseFormat::kStructuralTag;
    r.format_param = "response_format";
    r.grammar = dump_json(*rf);
    return;
  }
  if (t != "json_schema") {
    throw ApiError::bad_param("response_format.type",
                              "unknown response_format type '" + t +
                                  "' (text, json_object, json_schema or structural_tag).");
  }
  const json* js = field(*rf, "json_schema");
  if (!js)
    throw ApiError::bad_param("response_format.json_schema",
                              "json_schema needs a 'json_schema' object.");
  if (!js->is_object()) wrong_type("response_format.json_schema", *js, "an object");
  if (const json* n = field(*js, "name")) string(*n, "response_format.json_schema.name");
  const json* schema = field(*js, "schema");
  if (!schema)
    throw ApiError::bad_param("response_format.json_schema.schema",
                              "json_schema needs a 'schema'.");
  if (!schema->is_object() && !schema->is_boolean())
    wrong_type("response_format.json_schema.schema", *schema, "an object");
  if (const json* s = field(*js, "strict"))
    r.schema_strict = boolean(*s, "response_format.json_schema.strict");
  r.format = ResponseFormat::kJsonSchema;
  r.format_param = "response_format.json_schema.schema";
  r.schema = dump_json(*schema);
}

void parse_speculative(const json& body, ApiRequest& r) {
  const json* sp = field(body, "speculative");
  if (!sp) return;
  std::string method;
  if (sp->is_boolean()) {
    if (!sp->get<bool>()) return;
    method = "ngram";
  } else if (sp->is_string()) {
    method = sp->get<std::string>();
  } else if (sp->is_object()) {
    const json* m = field(*sp, "method");
    method = m ? string(*m, "speculative.method") : "ngram";
    if (const json* d = field(*sp, "max_draft"))
      r.max_draft = static_cast<std::uint32_t>(integer(*d, "speculative.max_draft", 1, 32));
  } else {
    wrong_type("speculative", *sp, "a boolean, \"ngram\" or an object");
  }
  if (method != "ngram")
    throw ApiError::bad_param("speculative",
                              "unknown speculative method '" + method + "' (ngram).");
  r.speculative = true;
}

// n and best_of: integers, of which only 1 is supported.
void only_one(const json& body, const char* name) {
  const json* v = field(body, name);
  if (!v) return;
  const std::int64_t x = integer(*v, name, std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max());
  if (x != 1) {
    unsupported(name, std::string("'") + name + "' is " + std::to_string(x) + "; only " + name +
                          " = 1 is supported.");
  }
}

void parse_unsupported(const json& body, const ApiRequest& r) {
  only_one(body, "n");
  if (r.endpoint == Endpoint::kCompletion && field(body, "tools"))
    unsupported("tools", "tools are a chat completions parameter.");
  if (field(body, "functions")) unsupported("functions", "functions are not supported.");
  if (r.endpoint == Endpoint::kCompletion) {
    if (const json* e = field(body, "echo"); e && boolean(*e, "echo"))
      unsupported("echo", "echo is not supported.");
    only_one(body, "best_of");
    if (const json* s = field(body, "suffix");
        s && !(s->is_string() && s->get<std::string>().empty()))
      unsupported("suffix", "suffix is not supported.");
  }
}

}  // namespace

ApiRequest parse_request(std::string_view body_text, Endpoint endpoint,
                         const RequestLimits& limits) {
  check_depth(body_text, {}, "the JSON body");
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::exception& e) {  // parse errors, and numbers out of range
    throw ApiError::bad_param(
        {}, std::string("We could not parse the JSON body of your request: ") + e.what());
  }
  if (!body.is_object()) throw ApiError::bad_param({}, "the request body must be a JSON object.");

  ApiRequest r;
  r.endpoint = endpoint;
  if (const json* m = field(body, "model")) r.model = string(*m, "model");
  if (endpoint == Endpoint::kChat)
    parse_messages(body, r, limits);
  else
    parse_prompt(body, r);
  parse_unsupported(body, r);

  const std::int64_t kMaxTokens = 1 << 24;
  if (const json* v = field(body, "max_tokens"))
    r.max_tokens = static_cast<std::uint32_t>(integer(*v, "max_tokens", 1, kMaxTokens));
  if (const json* v = field(body, "max_completion_tokens"))
    r.max_tokens = static_cast<std::uint32_t>(integer(*v, "max_completion_tokens", 1, kMaxTokens));
  parse_stop(body, r, limits);
  parse_sampling(body, r, limits);
  parse_logprobs(body, r);
  parse_response_format(body, r);
  parse_structured_outputs(body, r);
  if (endpoint == Endpoint::kChat &&
      (field(body, "tools") || field(body, "tool_choice") || field(body, "parallel_tool_calls"))) {
    // Again with the key order kept: tools render as the client wrote them.
    r.tools = parse_tools(nlohmann::ordered_json::parse(body_text));
    if (r.tools.active() && r.format != ResponseFormat::kText) {
      const std::string top = r.format_param.substr(0, r.format_param.find('.'));
      unsupported(top, top + " with tools is not supported; set tool_choice to 'none'.");
    }
  }
  if (const json* v = field(body, "thinking_budget"))
    r.thinking_budget = static_cast<std::uint32_t>(integer(*v, "thinking_budget", 0, kMaxTokens));
  parse_speculative(body, r);  // with temperature > 0, drafts are verified stochastically
  if (const json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  if (const json* so = field(body, "stream_options")) {
    if (!r.stream)
      throw ApiError::bad_param("stream_options", "'stream_options' needs 'stream' set to true.");
    if (!so->is_object()) wrong_type("stream_options", *so, "an object");
    if (const json* iu = field(*so, "include_usage"))
      r.include_usage = boolean(*iu, "stream_options.include_usage");
  }
  return r;
}

}  // namespace nextok::server
