// Stages 2-5: logit_bias → repetition → presence → frequency (spec order,
// the same as mlx-lm's make_logits_processors).
#include <algorithm>
#include <string>

#include "nextok/error.hpp"
#include "sampling/stages.hpp"

namespace nextok::stages {

void apply_penalties(std::span<float> w, const PenaltyConfig& pen,
                     std::span<const std::int32_t> history, FilterOrder order,
                     Workspace::Impl& ws, StageHook hook, void* ctx) {
  const auto vocab = static_cast<std::int64_t>(w.size());
  auto done = [&](const char* name) {
    if (hook != nullptr) hook(ctx, name);
  };

  for (const auto& [id, bias] : pen.logit_bias) {
    if (id >= 0 && id < vocab) w[static_cast<std::size_t>(id)] += bias;  // OOV ids skipped
  }
  done("logit_bias");

  // The window: the trailing `window` tokens, reduced to (id, count) runs.
  const std::size_t take = std::min<std::size_t>(pen.window, history.size());
  const auto recent = history.subspan(history.size() - take);
  for (std::int32_t id : recent) {
    if (id < 0 || id >= vocab)
      throw Error(ErrorCode::kInvalidArgument, "history",
                  "history token " + std::to_string(id) + " is outside the vocabulary [0, " +
                      std::to_string(vocab) + ")");
  }
  ws.window.assign(recent.begin(), recent.end());
  std::sort(ws.window.begin(), ws.window.end());
  auto for_each_unique = [&](auto fn) {
    for (std::size_t i = 0; i < ws.window.size();) {
      std::size_t j = i;
      while (j < ws.window.size() && ws.window[j] == ws.window[i]) ++j;
      fn(w[static_cast<std::size_t>(ws.window[i])], static_cast<std::int32_t>(j - i));
      i = j;
    }
  };

  if (pen.repetition_penalty != 1.0f) {
    const float r = pen.repetition_penalty;
    for_each_unique([r](float& x, std::int32_t) { x = x < 0.0f ? x * r : x / r; });
  }
  done("repetition_penalty");

  if (pen.presence_penalty != 0.0f) {
    const float p = pen.presence_penalty;
    for_each_unique([p](float& x, std::int32_t) { x -= p; });
  }
  done("presence_penalty");

  if (pen.frequency_penalty != 0.0f) {
    const float f = pen.frequency_penalty;
    if (order == FilterOrder::kMlxLm) {
      // mlx-lm scatter-subtracts once per occurrence.
      for_each_unique([f](float& x, std::int32_t n) {
        for (std::int32_t i = 0; i < n; ++i) x -= f;
      });
    } else {
      for_each_unique([f](float& x, std::int32_t n) { x -= f * static_cast<float>(n); });
    }
  }
  done("frequency_penalty");
}

}  // namespace nextok::stages
