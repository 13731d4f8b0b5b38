#include "call_stream.hpp"

namespace nextok::server {

void CallStream::start_at(std::size_t at) {
  scan_.emplace(at, format_ == ToolFormat::kLlamaJson ? "parameters" : "arguments");
  named_ = false;
  args_sent_ = CallScanner::kOpen;
}

void CallStream::feed(std::string_view text, std::vector<Event>& out) {
  if (!begun_) {
    const std::size_t at = call_start(text, format_);
    if (at == std::string_view::npos) return;
    begun_ = true;
    start_at(at);
  } else if (!scan_) {
    // Between Hermes calls (or after a failed one): the next tag, if any.
    if (format_ != ToolFormat::kHermes) return;
    const std::size_t at = text.find(kToolCallBegin, next_from_);
    if (at == std::string_view::npos) return;
    start_at(at + kToolCallBegin.size());
  }
  while (scan_) {
    CallScanner& s = *scan_;
    s.advance(text);
    if (!named_ && s.name()) {
      out.push_back({Event::Kind::kStart, started_, *s.name()});
      named_ = true;
    }
    if (named_ && s.args_begin() != CallScanner::kOpen) {
      if (args_sent_ == CallScanner::kOpen) args_sent_ = s.args_begin();
      const std::size_t upto = s.args_end() != CallScanner::kOpen ? s.args_end() : s.end();
      if (upto > args_sent_) {
        out.push_back({Event::Kind::kArguments, started_,
                       std::string(text.substr(args_sent_, upto - args_sent_))});
        args_sent_ = upto;
      }
    }
    if (!s.done() && !s.failed()) return;
    next_from_ = s.end();
    const bool call = s.done() && named_;
    scan_.reset();  // a failed or nameless object is left to parse_tool_output
    if (!call) return;
    out.push_back({Event::Kind::kEnd, started_++, {}});
    if (format_ != ToolFormat::kHermes) return;
    const std::size_t at = text.find(kToolCallBegin, next_from_);
    if (at != std::string_view::npos) start_at(at + kToolCallBegin.size());
  }
}

}  // namespace nextok::server
