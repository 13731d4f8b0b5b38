// The tool calls of a generation as it grows: where the first call begins,
// each call's name once complete, its arguments piece by piece as written,
// and its end. Both streaming writers (chat chunks, Responses events) read
// calls through it, so they send what parse_tool_output returns at the end.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "call_scanner.hpp"
#include "tools.hpp"

namespace nextok::server {

class CallStream {
 public:
  explicit CallStream(ToolFormat format) : format_(format) {}

  struct Event {
    enum class Kind { kStart, kArguments, kEnd };
    Kind kind;
    std::size_t index;  // the call's, from 0
    std::string text;   // kStart: the name; kArguments: the next piece
  };
  // Reads `text`, the whole generation so far (it only grows), and appends
  // what it newly shows.
  void feed(std::string_view text, std::vector<Event>& out);
  // A call has begun: no text from there on is content.
  bool begun() const noexcept { return begun_; }
  // Calls whose kStart went out.
  std::size_t started() const noexcept { return started_; }

 private:
  void start_at(std::size_t at);

  ToolFormat format_;
  std::optional<CallScanner> scan_;
  bool begun_ = false, named_ = false;
  std::size_t started_ = 0, next_from_ = 0, args_sent_ = 0;
};

}  // namespace nextok::server
