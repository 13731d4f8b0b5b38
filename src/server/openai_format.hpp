// OpenAI response bodies and stream chunks for chat and text completions.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "call_stream.hpp"
#include "job.hpp"
#include "request.hpp"

namespace nextok::server {

struct ResponseMeta {
  Endpoint endpoint = Endpoint::kChat;
  std::string id;  // chatcmpl-… / cmpl-…
  std::int64_t created = 0;
  std::string model;
  std::string fingerprint;
  std::uint32_t top_logprobs = 0;  // shown per token
  bool logprobs = false;
  bool include_usage = false;  // stream only
  bool tools = false;          // the output may hold tool calls (tools.hpp)
  ToolFormat tool_format = ToolFormat::kHermes;

  static ResponseMeta make(const ApiRequest& r, const std::string& model,
                           const std::string& fingerprint);
};

nlohmann::json usage_json(std::size_t prompt_tokens, std::size_t completion_tokens);

// The whole response of a finished job.
nlohmann::json response_json(const ResponseMeta& meta, const Job& job, const Vocabulary& vocab);

// Builds the chunks of a streamed response, in order.
class ChunkWriter {
 public:
  ChunkWriter(const ResponseMeta& meta, const Vocabulary& vocab)
      : meta_(meta), vocab_(vocab), stream_(meta.tool_format) {}
  // The chat stream's first chunk (role); none for completions.
  std::optional<nlohmann::json> opening() const;
  // The chunk for one token, or nullopt when it carries nothing to show.
  std::optional<nlohmann::json> token(const JobEvent& event);
  // With tools: the text held back and the calls, as chunks, before closing().
  std::vector<nlohmann::json> tool_tail();
  // The chunk that carries finish_reason.
  nlohmann::json closing(FinishReason finish) const;
  nlohmann::json usage(std::size_t prompt_tokens, std::size_t completion_tokens) const;

 private:
  nlohmann::json chunk(nlohmann::json choice) const;
  const ResponseMeta& meta_;
  const Vocabulary& vocab_;
  std::size_t text_offset_ = 0;
  std::string text_;       // tools: the content so far
  std::size_t shown_ = 0;  // tools: bytes of text_ sent as content
  bool calls_ = false;     // tools: calls were sent
  CallStream stream_;      // tools: the calls as they are written
};

}  // namespace nextok::server
