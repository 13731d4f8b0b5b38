// OpenAI function tools: the request's `tools` / `tool_choice`, the JSON
// Schema that constrains a call, and the calls read back from the output.
// The output format is the chat template's (docs/tool-calls.md): Hermes-style
//   <tool_call>{"name": "f", "arguments": {...}}</tool_call>
// or Llama 3.1's bare object, the whole turn
//   {"name": "f", "parameters": {...}}
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nextok::server {

inline constexpr std::string_view kToolCallBegin = "<tool_call>";
inline constexpr std::string_view kToolCallEnd = "</tool_call>";
// Llama 3.1 may open a call with this special token (tolerated, not required).
inline constexpr std::string_view kPythonTag = "<|python_tag|>";

enum class ToolFormat : std::uint8_t {
  kHermes,     // <tool_call> tags, "arguments", several calls (Qwen3, ChatML)
  kLlamaJson,  // one bare {"name", "parameters"} object per turn (Llama 3.1)
};

struct ToolSpec {
  std::string name;
  std::string parameters;  // the JSON Schema text
  bool strict = false;
  std::string rendered;  // the whole tool as the chat template shows it
};

enum class ToolChoice : std::uint8_t { kNone, kAuto, kRequired, kNamed };

struct ToolRequest {
  std::vector<ToolSpec> tools;
  ToolChoice choice = ToolChoice::kAuto;
  std::string named;  // kNamed: the function
  bool parallel = true;
  // Set by the server from the model's chat template, not by the client.
  ToolFormat format = ToolFormat::kHermes;

  bool active() const noexcept { return !tools.empty() && choice != ToolChoice::kNone; }
  // The schema of one call object over the tools the choice allows, its
  // arguments under the format's key ("arguments" or "parameters").
  std::string call_schema() const;
  bool strict() const noexcept;
};

// Parses `tools`, `tool_choice` and `parallel_tool_calls` (ApiError naming
// the field on bad input). `ordered` is the body with its key order kept,
// so that tools render as the client wrote them.
ToolRequest parse_tools(const nlohmann::ordered_json& ordered);

// Python's json.dumps (", " and ": ", non-ASCII kept, keys in their order):
// what transformers' `tojson` writes into chat templates.
std::string python_json(const nlohmann::ordered_json& v);

struct ParsedCall {
  std::string name;
  std::string arguments;  // the model's text of the value (JSON)
};

struct ParsedOutput {
  std::optional<std::string> content;  // text before the first call (none if blank)
  std::vector<ParsedCall> calls;
};

// Splits a generation into text and calls. A segment that is not a
// complete call (cut by max_tokens) stays part of the text. Llama 3.1: the
// turn is a call when, past leading whitespace (and an optional
// <|python_tag|>), it is one JSON object with a string "name" and an object
// "parameters" (or "arguments"); otherwise it is all text.
ParsedOutput parse_tool_output(std::string_view text, ToolFormat format = ToolFormat::kHermes);

// Streaming: how many leading bytes of the text so far are surely content,
// i.e. not part of a call that may be forming (Hermes: up to a <tool_call>
// or a tail that could begin one; Llama 3.1: all of it once the first
// non-whitespace byte is not `{`, none before).
std::size_t tool_text_safe_end(std::string_view text, ToolFormat format);

// Where the first call's object text begins (Hermes: just past <tool_call>;
// Llama 3.1: the `{` past leading whitespace and <|python_tag|>), or npos
// while the text is not a call yet.
std::size_t call_start(std::string_view text, ToolFormat format);

std::string tool_call_id();

}  // namespace nextok::server
