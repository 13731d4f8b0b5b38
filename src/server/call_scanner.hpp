// Reads one tool-call object, {"name": …, "arguments": …}, while it is being
// generated: resumable, byte by byte, so that a stream can send the name as
// soon as it is complete and the arguments as they are written. The
// arguments are the model's own text of the value (what parse_tool_output
// returns too), so the streamed pieces add up to the final call exactly.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nextok::server {

class CallScanner {
 public:
  static constexpr std::size_t kOpen = static_cast<std::size_t>(-1);

  // Scans from text offset `begin` (whitespace, then the object's '{');
  // `args_key` is "arguments" or "parameters" ("arguments" is taken too).
  CallScanner(std::size_t begin, std::string_view args_key) : pos_(begin), args_key_(args_key) {}

  // Reads what was appended to `text` since the last call.
  void advance(std::string_view text);

  bool done() const noexcept { return state_ == State::kDone; }    // the object closed
  bool failed() const noexcept { return state_ == State::kFail; }  // not a call object
  std::size_t end() const noexcept { return pos_; }                // past what was read
  const std::optional<std::string>& name() const noexcept { return name_; }
  // The arguments' value in text: [args_begin, args_end); args_end is kOpen
  // while it is being written (then the value runs to end() so far, or one
  // byte short of it for a scalar, whose end is seen one byte late).
  std::size_t args_begin() const noexcept { return args_begin_; }
  std::size_t args_end() const noexcept { return args_end_; }

 private:
  enum class State {
    kOpen,
    kKey,
    kKeyString,
    kColon,
    kValue,
    kString,
    kNested,
    kScalar,
    kAfter,
    kDone,
    kFail
  };
  void finish_value(std::string_view text, std::size_t end);
  // Inside a string: reads c (escapes included); true at the closing quote.
  bool string_closes(char c) noexcept;
  // The member being read holds the arguments (args_key, or "arguments").
  bool at_arguments() const noexcept;

  State state_ = State::kOpen;
  std::size_t pos_;
  std::string args_key_;
  std::size_t key_begin_ = 0, value_begin_ = 0;
  std::string key_;
  int depth_ = 0;
  bool in_string_ = false, escape_ = false;
  std::optional<std::string> name_;
  std::size_t args_begin_ = kOpen, args_end_ = kOpen;
};

// The raw text of the arguments of the call object `object` (a complete,
// valid object): its top-level member `key`, or "arguments"; the last one
// written when both are. nullopt when it has neither.
std::optional<std::string_view> raw_member(std::string_view object, std::string_view key);

}  // namespace nextok::server
