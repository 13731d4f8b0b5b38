// ThinkSplitter: routes decoded text to the reasoning or the content channel
// on <think> / </think>, and counts reasoning pieces for the thinking budget.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nextok {

class Vocabulary;

enum class Channel : std::uint8_t { kContent, kReasoning };
const char* channel_name(Channel channel) noexcept;

struct ThinkOptions {
  bool enabled = false;      // route think blocks at all; off = everything is content
  bool starts_open = false;  // the prompt already opened the block (Qwen3's template)
  // Reasoning pieces allowed before </think> is forced. The piece that makes
  // the count exceed the budget latches force_close (the spec's rule).
  std::optional<std::uint32_t> budget;
  std::string open = "<think>";
  std::string close = "</think>";
  // Throws kInvalidArgument for empty or overlapping markers.
  void validate() const;
};

// Think routing for a prompt: enabled when the vocabulary has both markers;
// starts_open when the rendered prompt ends inside an open block (Qwen3's
// generation prompt). A budget needs the markers: without them it throws
// Error{kInvalidArgument, "thinking_budget"}.
ThinkOptions think_options_for(const Vocabulary& vocab, std::string_view rendered_prompt,
                               std::optional<std::uint32_t> budget = std::nullopt);

class ThinkSplitter {
 public:
  explicit ThinkSplitter(ThinkOptions options);

  struct Routed {
    std::string reasoning;
    std::string content;
    void clear() {
      reasoning.clear();
      content.clear();
    }
  };

  // Routes one decoded piece (appending to out). Text that may be the start
  // of a marker waits for the next piece; markers themselves are dropped.
  // A piece read while the block stays open counts against the budget.
  void push(std::string_view piece, Routed& out);
  // Releases held-back text at the end of the output.
  void flush(Routed& out);

  // The block is open: tokens now are reasoning.
  bool in_think() const noexcept { return state_ == State::kThink; }
  // The block has closed (or never opened): tokens now are content.
  bool in_content() const noexcept { return state_ == State::kContent; }
  std::uint32_t reasoning_pieces() const noexcept { return pieces_; }

  // Counts one reasoning piece; latches force_close once the count exceeds
  // the budget. With no budget this is one branch.
  void account_thinking_piece() noexcept {
    if (!options_.budget) return;
    if (++pieces_ > *options_.budget && !fired_) force_close_ = true;
  }
  // True once per output: the loop must inject </think> now.
  bool take_force_close() noexcept {
    if (!force_close_) return false;
    force_close_ = false;
    fired_ = true;
    return true;
  }
  const ThinkOptions& options() const noexcept { return options_; }

 private:
  enum class State : std::uint8_t { kStart, kThink, kContent };
  void route(Routed& out, bool at_end);

  ThinkOptions options_;
  State state_;
  std::string held_;
  std::uint32_t pieces_ = 0;
  bool force_close_ = false;
  bool fired_ = false;
};

}  // namespace nextok
