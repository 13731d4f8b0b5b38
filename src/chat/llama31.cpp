// The long Llama 3.1 template (also 3.3's, and 3.2's without builtin tools):
// a system turn that always carries "Cutting Knowledge Date" and "Today
// Date", the tools in the first user turn (the template's default
// tools_in_user_message) or in the system turn, a call written as one bare JSON object
// {"name": …, "parameters": …}, and tool results as ipython turns holding the
// content as a JSON string (a string is `iterable` in Jinja, so the template
// applies tojson to it). With builtin_tools (3.1 and 3.3 read them): a
// "Tools:" line, calls to those tools as <|python_tag|>name.call(k="v"), and
// call turns ended with <|eom_id|> (the template's ipython mode).
#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "chat/formats.hpp"
#include "nextok/error.hpp"

namespace nextok::chat_detail {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::string_view kHeaderEnd = "<|end_header_id|>\n\n";
constexpr std::string_view kEot = "<|eot_id|>";
constexpr std::string_view kEom = "<|eom_id|>";

// Python's json.dumps(v, indent=4, ensure_ascii=False): items end with ","
// (no space) before the newline; empty containers stay "{}" and "[]".
void append_indented(std::string& out, const ojson& v, int depth) {
  const bool object = v.is_object();
  if ((!object && !v.is_array()) || v.empty()) {
    out += python_json(v);
    return;
  }
  const std::string inner(static_cast<std::size_t>(depth + 1) * 4, ' ');
  out += object ? "{\n" : "[\n";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    if (object) out += python_json_string(it.key()) + ": ";
    append_indented(out, *it, depth + 1);
  }
  out += '\n';
  out += std::string(static_cast<std::size_t>(depth) * 4, ' ');
  out += object ? '}' : ']';
}

// `tool_call.arguments | tojson`. A JSON text is written as the value it
// holds (what the model was trained on; clients send arguments as a string),
// anything else as the JSON string the template would make of it.
std::string call_arguments(const std::string& arguments) {
  try {
    return python_json(ojson::parse(arguments));
  } catch (const ojson::exception&) {
    return python_json_string(arguments);
  }
}

// The format line, then each tool as `tojson(indent=4)`, as both of the
// template's tool sections write them.
void append_tool_list(std::string& out, std::span<const std::string> tools) {
  out +=
      "Respond in the format {\"name\": function name, \"parameters\": dictionary of argument "
      "name and its value}.Do not use variables.\n\n";
  for (const std::string& t : tools) {
    append_indented(out, ojson::parse(t), 0);
    out += "\n\n";
  }
}

// `name.call(k="v", …)`: the template concatenates each argument's name and
// value as strings (`arguments | items`), so the arguments must be a JSON
// object of strings; anything else fails there too.
std::string builtin_call(const ChatToolCall& call, const std::string& where) {
  ojson args;
  try {
    args = ojson::parse(call.arguments);
  } catch (const ojson::exception&) {
    throw Error(ErrorCode::kInvalidArgument, "tool_calls",
                where + "the arguments of builtin tool " + call.name + " are not JSON");
  }
  if (!args.is_object()) {
    throw Error(ErrorCode::kInvalidArgument, "tool_calls",
                where + "the arguments of builtin tool " + call.name + " are not a JSON object");
  }
  std::string out = "<|python_tag|>" + call.name + ".call(";
  bool first = true;
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (!it->is_string()) {
      throw Error(ErrorCode::kInvalidArgument, "tool_calls",
                  where + "argument \"" + it.key() + "\" of builtin tool " + call.name +
                      " is not a string (the template joins them as strings)");
    }
    if (!first) out += ", ";
    first = false;
    out += it.key() + "=\"" + it->get<std::string>() + "\"";
  }
  return out + ")";
}

void check_llama31_messages(std::span<const ChatMessage> messages) {
  if (messages.empty())
    throw Error(ErrorCode::kInvalidArgument, "messages", "the conversation has no messages");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const std::string where = "message " + std::to_string(i) + ": ";
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool" &&
        m.role != "ipython") {
      throw Error(ErrorCode::kInvalidArgument, "role",
                  where + "unknown role \"" + m.role +
                      "\" (expected system, user, assistant, tool or ipython)");
    }
    if (m.tool_calls.size() > 1) {
      // The template's own refusal.
      throw Error(ErrorCode::kInvalidArgument, "tool_calls",
                  where + "This model only supports single tool-calls at once!");
    }
  }
}

}  // namespace

std::string strftime_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, format, &local);
  return std::string(buf, n);
}

std::string render_llama31(std::span<const ChatMessage> messages, const ChatOptions& opt,
                           const std::string& bos_token, std::string_view date,
                           bool reads_builtin_tools) {
  check_llama31_messages(messages);
  const bool tools = !opt.tools.empty();
  const std::vector<std::string>* builtin =
      reads_builtin_tools && opt.builtin_tools ? &*opt.builtin_tools : nullptr;
  const bool in_user = opt.tools_in_user_message.value_or(true);
  std::string out = bos_token;
  std::size_t first = 0;
  std::string_view system;
  if (messages[0].role == "system") {
    system = py_strip(messages[0].content);
    first = 1;
  }
  out += "<|start_header_id|>system";
  out += kHeaderEnd;
  if (tools || builtin) out += "Environment: ipython\n";
  if (builtin) {
    out += "Tools: ";
    bool listed = false;
    for (const std::string& name : *builtin) {
      if (name == "code_interpreter") continue;
      if (listed) out += ", ";
      listed = true;
      out += name;
    }
    out += "\n\n";
  }
  out += "Cutting Knowledge Date: December 2023\nToday Date: ";
  out += date;
  out += "\n\n";
  if (tools && !in_user) {
    out +=
        "You have access to the following functions. To call a function, please respond with JSON "
        "for a function call.";
    append_tool_list(out, opt.tools);
  }
  out += system;
  out += kEot;
  if (tools && in_user) {
    if (first == messages.size()) {
      throw Error(ErrorCode::kInvalidArgument, "messages",
                  "Cannot put tools in the first user message when there's no first user "
                  "message!");
    }
    // The first message after the system one, whatever its role, carries the tools.
    out += "<|start_header_id|>user";
    out += kHeaderEnd;
    out +=
        "Given the following functions, please respond with a JSON for a function call with its "
        "proper arguments that best answers the given prompt.\n\n";
    append_tool_list(out, opt.tools);
    out += py_strip(messages[first].content);
    out += kEot;
    ++first;
  }
  for (std::size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (!m.tool_calls.empty()) {
      const ChatToolCall& call = m.tool_calls.front();
      out += "<|start_header_id|>assistant";
      out += kHeaderEnd;
      if (builtin && std::find(builtin->begin(), builtin->end(), call.name) != builtin->end()) {
        out += builtin_call(call, "message " + std::to_string(i) + ": ");
      } else {
        out += "{\"name\": \"" + call.name +
               "\", \"parameters\": " + call_arguments(call.arguments) + "}";
      }
      // The template's ipython mode ends a call turn with end-of-message.
      out += builtin ? kEom : kEot;
      continue;
    } else if (m.role == "tool" || m.role == "ipython") {
      out += "<|start_header_id|>ipython";
      out += kHeaderEnd;
      out += python_json_string(m.content);
    } else {
      out += "<|start_header_id|>" + m.role;
      out += kHeaderEnd;
      out += py_strip(m.content);
    }
    out += kEot;
  }
  if (opt.add_generation_prompt) {
    out += "<|start_header_id|>assistant";
    out += kHeaderEnd;
  }
  return out;
}

}  // namespace nextok::chat_detail
