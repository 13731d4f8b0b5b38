#include "responses_api.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include "api_error.hpp"
#include "tools.hpp"

namespace nextok::server {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

const ojson* field(const ojson& o, const char* name) {
  const auto it = o.find(name);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& param, const std::string& why,
                      const char* code = "invalid_value") {
  throw ApiError::bad_param(param, why, code);
}

std::string text_of(const ojson& content, const std::string& at) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    bad(at, "'" + at + "' must be a string or an array of parts.", "invalid_type");
  std::string out;
  for (std::size_t j = 0; j < content.size(); ++j) {
    const std::string pn = at + "[" + std::to_string(j) + "]";
    const ojson& part = content[j];
    const ojson* type = part.is_object() ? field(part, "type") : nullptr;
    if (!type || !type->is_string()) bad(pn + ".type", "a content part needs a 'type'.");
    const std::string& t = type->get_ref<const std::string&>();
    if (t != "input_text" && t != "output_text" && t != "text")
      bad(pn + ".type", "only text parts are supported (not '" + t + "').",
          "unsupported_parameter");
    const ojson* text = field(part, "text");
    if (!text || !text->is_string()) bad(pn + ".text", "a text part needs 'text'.");
    out += text->get<std::string>();
  }
  return out;
}

// input (text or items) → chat messages.
ojson messages_of(const ojson& body) {
  ojson msgs = ojson::array();
  if (const ojson* ins = field(body, "instructions")) {
    if (!ins->is_string()) bad("instructions", "'instructions' must be a string.", "invalid_type");
    msgs.push_back({{"role", "system"}, {"content", *ins}});
  }
  const ojson* input = field(body, "input");
  if (!input) bad("input", "'input' is required.", "missing_required_parameter");
  if (input->is_string()) {
    msgs.push_back({{"role", "user"}, {"content", *input}});
    return msgs;
  }
  if (!input->is_array())
    bad("input", "'input' must be a string or an array of items.", "invalid_type");
  for (std::size_t i = 0; i < input->size(); ++i) {
    const std::string at = "input[" + std::to_string(i) + "]";
    const ojson& it = (*input)[i];
    if (!it.is_object()) bad(at, "'" + at + "' must be an object.", "invalid_type");
    const ojson* type = field(it, "type");
    const std::string t = type && type->is_string() ? type->get<std::string>() : "message";
    if (t == "message") {
      const ojson* role = field(it, "role");
      if (!role || !role->is_string()) bad(at + ".role", "a message item needs a 'role'.");
      const ojson* content = field(it, "content");
      if (!content) bad(at + ".content", "a message item needs 'content'.");
      msgs.push_back({{"role", *role}, {"content", text_of(*content, at + ".content")}});
    } else if (t == "function_call") {
      const ojson* name = field(it, "name");
      if (!name || !name->is_string()) bad(at + ".name", "a function_call item needs a 'name'.");
      const ojson* args = field(it, "arguments");
      const ojson* cid = field(it, "call_id");
      ojson call = {{"id", cid ? *cid : ojson("call")},
                    {"type", "function"},
                    {"function", {{"name", *name}, {"arguments", args ? *args : ojson("{}")}}}};
      // Consecutive calls belong to one assistant turn.
      if (msgs.empty() || msgs.back()["role"] != "assistant" || !msgs.back().contains("tool_calls"))
        msgs.push_back({{"role", "assistant"}, {"content", ""}, {"tool_calls", ojson::array()}});
      msgs.back()["tool_calls"].push_back(std::move(call));
    } else if (t == "function_call_output") {
      const ojson* out = field(it, "output");
      if (!out) bad(at + ".output", "a function_call_output item needs 'output'.");
      const ojson* cid = field(it, "call_id");
      msgs.push_back({{"role", "tool"},
                      {"tool_call_id", cid ? *cid : ojson("call")},
                      {"content", out->is_string() ? out->get<std::string>() : out->dump()}});
    } else if (t == "reasoning") {
      continue;  // stateless: earlier reasoning is not shown to the model again
    } else {
      bad(at + ".type", "input items of type '" + t + "' are not supported.",
          "unsupported_parameter");
    }
  }
  return msgs;
}

ojson tools_of(const ojson& tools) {
  if (!tools.is_array()) bad("tools", "'tools' must be an array.", "invalid_type");
  ojson out = ojson::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string at = "tools[" + std::to_string(i) + "]";
    const ojson& t = tools[i];
    const ojson* type = t.is_object() ? field(t, "type") : nullptr;
    if (!type || *type != "function")
      bad(at + ".type", "only function tools are supported.", "unsupported_parameter");
    ojson fn = ojson::object();
    for (const char* k : {"name", "description", "parameters", "strict"})
      if (const ojson* v = field(t, k)) fn[k] = *v;
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  return out;
}

// Chat parameter names in errors → the Responses ones.
std::string responses_param(const std::string& p) {
  auto starts = [&](const char* s) { return p.rfind(s, 0) == 0; };
  if (starts("messages")) return "input";
  if (p == "max_tokens") return "max_output_tokens";
  if (starts("response_format.json_schema.schema")) return "text.format.schema";
  if (starts("response_format")) return "text.format";
  if (starts("tools[")) {
    std::string q = p;
    if (const auto f = q.find("].function."); f != std::string::npos) q.erase(f + 1, 9);
    return q;
  }
  if (starts("tool_choice.function.name")) return "tool_choice.name";
  return p;
}

}  // namespace

ResponsesCall parse_responses_request(std::string_view body_text, const std::string& model) {
  ojson body;
  try {
    body = ojson::parse(body_text);
  } catch (const ojson::exception& e) {
    throw ApiError::bad_param(
        {}, std::string("We could not parse the JSON body of your request: ") + e.what());
  }
  if (!body.is_object()) bad({}, "the request body must be a JSON object.");
  if (field(body, "previous_response_id"))
    bad("previous_response_id",
        "this server keeps no responses (store: false); send the whole conversation in 'input'.",
        "unsupported_parameter");
  ojson chat = {{"messages", messages_of(body)}};
  for (const char* k : {"model", "temperature", "top_p", "top_k", "min_p", "seed", "stream",
                        "parallel_tool_calls", "thinking_budget", "logit_bias"})
    if (const ojson* v = field(body, k)) chat[k] = *v;
  if (const ojson* v = field(body, "max_output_tokens")) chat["max_tokens"] = *v;
  if (const ojson* t = field(body, "tools")) chat["tools"] = tools_of(*t);
  if (const ojson* c = field(body, "tool_choice")) {
    if (c->is_object() && field(*c, "name"))
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*c)["name"]}}}};
    else
      chat["tool_choice"] = *c;
  }
  if (const ojson* text = field(body, "text")) {
    const ojson* fmt = text->is_object() ? field(*text, "format") : nullptr;
    if (fmt) {
      if (!fmt->is_object()) bad("text.format", "'text.format' must be an object.", "invalid_type");
      const ojson* type = field(*fmt, "type");
      if (!type || !type->is_string()) bad("text.format.type", "'text.format' needs a 'type'.");
      if (*type == "json_schema") {
        ojson js = ojson::object();
        for (const char* k : {"name", "schema", "strict"})
          if (const ojson* v = field(*fmt, k)) js[k] = *v;
        chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
      } else {
        chat["response_format"] = {{"type", *type}};
      }
    }
  }
  ResponsesCall call;
  try {
    call.chat = parse_request(chat.dump(), Endpoint::kChat);
  } catch (const ApiError& e) {
    throw ApiError(e.status(), e.type(), e.what(), responses_param(e.param()), e.code());
  }
  const json plain = json::parse(body_text);
  auto echo = [&](const char* k, json dflt) {
    const auto it = plain.find(k);
    call.echo[k] = it == plain.end() ? std::move(dflt) : *it;
  };
  echo("instructions", nullptr);
  echo("tools", json::array());
  echo("tool_choice", "auto");
  echo("parallel_tool_calls", true);
  echo("temperature", 1.0);
  echo("top_p", 1.0);
  echo("max_output_tokens", nullptr);
  echo("metadata", json::object());
  echo("text", {{"format", {{"type", "text"}}}});
  echo("reasoning", {{"effort", nullptr}, {"summary", nullptr}});
  call.id = random_id("resp", '_');
  call.created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  call.model = model;
  return call;
}

namespace {

json usage_of(const Job& job) {
  std::size_t reasoning = 0;
  for (const Channel c : job.channels) reasoning += c == Channel::kReasoning;
  const std::size_t out = job.result.tokens.size();
  return {{"input_tokens", job.prompt.size()},
          {"input_tokens_details", {{"cached_tokens", 0}}},
          {"output_tokens", out},
          {"output_tokens_details", {{"reasoning_tokens", reasoning}}},
          {"total_tokens", job.prompt.size() + out}};
}

json reasoning_item(const std::string& id, const std::string& text) {
  return {{"type", "reasoning"},
          {"id", id},
          {"summary", json::array()},
          {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})},
          {"status", "completed"}};
}

json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

json message_item(const std::string& id, const std::string& text, const char* status) {
  json content = json::array();
  if (std::string_view(status) == "completed") content.push_back(text_part(text));
  return {{"type", "message"},
          {"id", id},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

json call_item(const ParsedCall& c, const char* status) {
  return {{"type", "function_call"},
          {"id", random_id("fc", '_')},
          {"call_id", tool_call_id()},
          {"name", c.name},
          {"arguments", std::string_view(status) == "completed" ? c.arguments : ""},
          {"status", status}};
}

json envelope(const ResponsesCall& call, const char* status, json output, const Job* job) {
  json r = {{"id", call.id},
            {"object", "response"},
            {"created_at", call.created},
            {"status", status},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"model", call.model},
            {"output", std::move(output)},
            {"store", false},
            {"usage", job ? usage_of(*job) : json(nullptr)}};
  for (const auto& [k, v] : call.echo.items()) r[k] = v;
  if (job && job->result.finish == FinishReason::kLength) {
    r["status"] = "incomplete";
    r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  }
  return r;
}

// The items of a finished generation: reasoning, text, calls.
json output_items(const ResponsesCall& call, const Job& job, const std::string& rs_id,
                  const std::string& msg_id) {
  json out = json::array();
  const GenerateResult& r = job.result;
  if (!r.reasoning.empty()) out.push_back(reasoning_item(rs_id, r.reasoning));
  std::optional<std::string> text = r.content;
  std::vector<ParsedCall> calls;
  if (call.chat.tools.active()) {
    ParsedOutput p = parse_tool_output(r.content, call.chat.tools.format);
    text = p.content;
    calls = std::move(p.calls);
  }
  if (text && (!text->empty() || calls.empty()))
    out.push_back(message_item(msg_id, *text, "completed"));
  for (const ParsedCall& c : calls) out.push_back(call_item(c, "completed"));
  return out;
}

}  // namespace

json response_object(const ResponsesCall& call, const Job& job) {
  return envelope(call, "completed",
                  output_items(call, job, random_id("rs", '_'), random_id("msg", '_')), &job);
}

json ResponsesStream::event(const char* type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = seq_++;
  return fields;
}

std::vector<json> ResponsesStream::opening() {
  std::vector<json> out;
  out.push_back(event("response.created",
                      {{"response", envelope(call_, "in_progress", json::array(), nullptr)}}));
  out.push_back(event("response.in_progress",
                      {{"response", envelope(call_, "in_progress", json::array(), nullptr)}}));
  return out;
}

void ResponsesStream::open_reasoning(std::vector<json>& out) {
  reasoning_open_ = true;
  reasoning_index_ = next_index_++;
  reasoning_id_ = random_id("rs", '_');
  json item = {{"type", "reasoning"},
               {"id", reasoning_id_},
               {"summary", json::array()},
               {"status", "in_progress"}};
  out.push_back(
      event("response.output_item.added", {{"output_index", reasoning_index_}, {"item", item}}));
}

void ResponsesStream::close_reasoning(std::vector<json>& out) {
  if (!reasoning_open_) return;
  reasoning_open_ = false;
  out.push_back(event("response.reasoning_text.done", {{"item_id", reasoning_id_},
                                                       {"output_index", reasoning_index_},
                                                       {"content_index", 0},
                                                       {"text", reasoning_}}));
  json item = reasoning_item(reasoning_id_, reasoning_);
  done_items_.push_back(item);
  out.push_back(
      event("response.output_item.done", {{"output_index", reasoning_index_}, {"item", item}}));
}

void ResponsesStream::open_message(std::vector<json>& out) {
  close_reasoning(out);
  message_open_ = true;
  message_index_ = next_index_++;
  message_id_ = random_id("msg", '_');
  out.push_back(event(
      "response.output_item.added",
      {{"output_index", message_index_}, {"item", message_item(message_id_, "", "in_progress")}}));
  out.push_back(event("response.content_part.added", {{"item_id", message_id_},
                                                      {"output_index", message_index_},
                                                      {"content_index", 0},
                                                      {"part", text_part("")}}));
}

void ResponsesStream::close_message(std::vector<json>& out) {
  if (!message_open_) return;
  message_open_ = false;
  const std::string text = text_.substr(0, shown_);
  out.push_back(event("response.output_text.done", {{"item_id", message_id_},
                                                    {"output_index", message_index_},
                                                    {"content_index", 0},
                                                    {"text", text}}));
  out.push_back(event("response.content_part.done", {{"item_id", message_id_},
                                                     {"output_index", message_index_},
                                                     {"content_index", 0},
                                                     {"part", text_part(text)}}));
  json item = message_item(message_id_, text, "completed");
  done_items_.push_back(item);
  out.push_back(
      event("response.output_item.done", {{"output_index", message_index_}, {"item", item}}));
}

std::vector<json> ResponsesStream::token(const JobEvent& ev) {
  std::vector<json> out;
  if (!ev.reasoning.empty()) {
    if (!reasoning_open_) open_reasoning(out);
    reasoning_ += ev.reasoning;
    out.push_back(event("response.reasoning_text.delta", {{"item_id", reasoning_id_},
                                                          {"output_index", reasoning_index_},
                                                          {"content_index", 0},
                                                          {"delta", ev.reasoning}}));
  }
  if (ev.content.empty()) return out;
  text_ += ev.content;
  std::size_t safe = text_.size();
  // Text goes out until a call may begin; then the calls as they are written.
  if (call_.chat.tools.active()) {
    safe = calls_.begun() ? shown_ : tool_text_safe_end(text_, call_.chat.tools.format);
  }
  if (safe > shown_) {
    if (!message_open_) open_message(out);
    out.push_back(
        event("response.output_text.delta", {{"item_id", message_id_},
                                             {"output_index", message_index_},
                                             {"content_index", 0},
                                             {"delta", text_.substr(shown_, safe - shown_)}}));
    shown_ = safe;
  }
  if (call_.chat.tools.active()) {
    std::vector<CallStream::Event> events;
    calls_.feed(text_, events);
    for (auto& e : events) call_event(e, out);
  }
  return out;
}

void ResponsesStream::call_event(CallStream::Event& e, std::vector<json>& out) {
  using Kind = CallStream::Event::Kind;
  if (e.kind == Kind::kStart) {
    close_message(out);
    open_call_index_ = next_index_++;
    open_call_ = call_item({e.text, ""}, "in_progress");
    out.push_back(event("response.output_item.added",
                        {{"output_index", open_call_index_}, {"item", open_call_}}));
  } else if (e.kind == Kind::kArguments) {
    open_call_["arguments"].get_ref<std::string&>() += e.text;
    out.push_back(
        event("response.function_call_arguments.delta", {{"item_id", open_call_["id"]},
                                                         {"output_index", open_call_index_},
                                                         {"delta", std::move(e.text)}}));
  } else {
    end_call("completed", out);
  }
}

void ResponsesStream::end_call(const char* status, std::vector<json>& out) {
  if (open_call_.is_null()) return;
  out.push_back(
      event("response.function_call_arguments.done", {{"item_id", open_call_["id"]},
                                                      {"output_index", open_call_index_},
                                                      {"arguments", open_call_["arguments"]}}));
  open_call_["status"] = status;
  done_items_.push_back(open_call_);
  out.push_back(event("response.output_item.done",
                      {{"output_index", open_call_index_}, {"item", open_call_}}));
  open_call_ = nullptr;
}

std::vector<json> ResponsesStream::closing(const Job& job) {
  std::vector<json> out;
  close_reasoning(out);
  std::vector<ParsedCall> calls;
  if (calls_.started() > 0) {
    end_call("incomplete", out);  // a call cut by max_output_tokens
  } else if (call_.chat.tools.active()) {
    ParsedOutput p = parse_tool_output(text_, call_.chat.tools.format);
    calls = std::move(p.calls);
    if (calls.empty() && text_.size() > shown_) {
      // No call after all: the held-back text is content.
      if (!message_open_) open_message(out);
      out.push_back(event("response.output_text.delta", {{"item_id", message_id_},
                                                         {"output_index", message_index_},
                                                         {"content_index", 0},
                                                         {"delta", text_.substr(shown_)}}));
      shown_ = text_.size();
    }
  }
  // A response always has a message or a call.
  if (!message_open_ && calls.empty() && calls_.started() == 0) open_message(out);
  close_message(out);
  for (const ParsedCall& c : calls) {
    const int index = next_index_++;
    json item = call_item(c, "in_progress");
    out.push_back(event("response.output_item.added", {{"output_index", index}, {"item", item}}));
    out.push_back(
        event("response.function_call_arguments.delta",
              {{"item_id", item["id"]}, {"output_index", index}, {"delta", c.arguments}}));
    out.push_back(
        event("response.function_call_arguments.done",
              {{"item_id", item["id"]}, {"output_index", index}, {"arguments", c.arguments}}));
    item["arguments"] = c.arguments;
    item["status"] = "completed";
    done_items_.push_back(item);
    out.push_back(event("response.output_item.done", {{"output_index", index}, {"item", item}}));
  }
  json resp = envelope(call_, "completed", done_items_, &job);
  const bool incomplete = resp["status"] == "incomplete";
  out.push_back(
      event(incomplete ? "response.incomplete" : "response.completed", {{"response", resp}}));
  return out;
}

}  // namespace nextok::server
