// OpenAI function tools: the request's `tools` / `tool_choice`, the JSON
// Schema that constrains a call, and the calls read back from the output.
// The output format is Hermes-style (docs/tool-calls.md):
//   <tool_call>{"name": "f", "arguments": {...}}</tool_call>
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

  bool active() const noexcept { return !tools.empty() && choice != ToolChoice::kNone; }
  // The schema of one call object over the tools the choice allows.
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
  std::string arguments;  // compact JSON
};

struct ParsedOutput {
  std::optional<std::string> content;  // text before the first call (none if blank)
  std::vector<ParsedCall> calls;
};

// Splits a generation into text and calls. A segment that is not a
// complete call (cut by max_tokens) stays part of the text.
ParsedOutput parse_tool_output(std::string_view text);

std::string tool_call_id();

}  // namespace nextok::server
