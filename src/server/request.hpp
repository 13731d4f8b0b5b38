// An OpenAI request body, parsed and validated before any work is queued.
// Every problem is an ApiError naming the parameter; nothing here touches the
// model.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/chat.hpp"
#include "nextok/config.hpp"
#include "tools.hpp"

namespace nextok::server {

enum class Endpoint : std::uint8_t { kChat, kCompletion };

// What constrains the output: response_format, or a structured-output field
// as vLLM, SGLang and llama.cpp's servers take them (structured_outputs.hpp).
enum class ResponseFormat : std::uint8_t {
  kText,
  kJsonObject,
  kJsonSchema,
  kRegex,
  kChoice,
  kGbnf,
  kLark,
  kStructuralTag
};

struct RequestLimits {
  std::size_t max_messages = 1024;
  std::size_t max_stop = 16;
  std::size_t max_logit_bias = 1024;
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;  // empty: the served model
  // Chat: the conversation. Completions: a prompt as text or as token ids.
  std::vector<ChatMessage> messages;
  std::optional<bool> enable_thinking;                    // chat_template_kwargs.enable_thinking
  std::optional<bool> tools_in_user_message;              // chat_template_kwargs (Llama 3.1)
  std::optional<std::vector<std::string>> builtin_tools;  // chat_template_kwargs (Llama 3.1)
  std::string prompt;
  std::vector<std::int32_t> prompt_ids;
  bool prompt_is_ids = false;

  std::optional<std::uint32_t> max_tokens;
  std::vector<std::string> stop;
  SamplerConfig sampler;  // temperature defaults to 1, as OpenAI's does
  PenaltyConfig penalties;
  bool logprobs = false;
  std::uint32_t top_logprobs = 0;  // shown per token (chat: top_logprobs; completions: logprobs)

  ResponseFormat format = ResponseFormat::kText;
  std::string format_param;          // the field that set `format`, which errors name
  std::string schema;                // json_schema: the schema text
  std::string grammar;               // kRegex: the pattern; kGbnf, kLark: the grammar text
  std::vector<std::string> choices;  // kChoice
  bool schema_strict = false;
  ToolRequest tools;  // chat only

  std::optional<std::uint32_t> thinking_budget;
  bool speculative = false;
  std::uint32_t max_draft = 4;

  bool stream = false;
  bool include_usage = false;
};

// Throws ApiError (400) for malformed JSON, wrong types and out-of-range or
// unsupported parameters.
ApiRequest parse_request(std::string_view body, Endpoint endpoint,
                         const RequestLimits& limits = {});

}  // namespace nextok::server
