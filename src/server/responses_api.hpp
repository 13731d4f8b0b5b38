// POST /v1/responses, stateless (docs/server.md "Responses API"): the request
// is read as the chat request it means (input items → messages, text.format
// → response_format, flat function tools → chat tools), run like any chat
// completion, and answered as a Response object or its streamed events.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "call_stream.hpp"
#include "job.hpp"
#include "request.hpp"

namespace nextok::server {

struct ResponsesCall {
  ApiRequest chat;
  nlohmann::json echo;  // the request fields a Response repeats (tools, text, …)
  std::string id;       // resp_…
  std::int64_t created = 0;
  std::string model;
};

// Throws ApiError (400) naming the Responses field.
ResponsesCall parse_responses_request(std::string_view body, const std::string& model);

nlohmann::json response_object(const ResponsesCall& call, const Job& job);

// The streamed events, in order; each carries its type and sequence number.
class ResponsesStream {
 public:
  explicit ResponsesStream(const ResponsesCall& call)
      : call_(call), calls_(call.chat.tools.format) {}
  std::vector<nlohmann::json> opening();
  std::vector<nlohmann::json> token(const JobEvent& event);
  std::vector<nlohmann::json> closing(const Job& job);

 private:
  nlohmann::json event(const char* type, nlohmann::json fields);
  void open_reasoning(std::vector<nlohmann::json>& out);
  void close_reasoning(std::vector<nlohmann::json>& out);
  void open_message(std::vector<nlohmann::json>& out);
  void close_message(std::vector<nlohmann::json>& out);
  // A call's events as CallStream shows it: the item, its argument pieces,
  // its end (status completed, or incomplete when the output was cut).
  void call_event(CallStream::Event& e, std::vector<nlohmann::json>& out);
  void end_call(const char* status, std::vector<nlohmann::json>& out);

  const ResponsesCall& call_;
  std::uint64_t seq_ = 0;
  int next_index_ = 0;
  int reasoning_index_ = -1, message_index_ = -1;
  bool reasoning_open_ = false, message_open_ = false;
  std::string reasoning_id_, message_id_;
  std::string reasoning_, text_;  // all text so far
  std::size_t shown_ = 0;         // bytes of text_ sent (tools hold back a call)
  std::vector<nlohmann::json> done_items_;
  CallStream calls_;
  nlohmann::json open_call_;  // the call being written (null: none)
  int open_call_index_ = -1;
};

}  // namespace nextok::server
