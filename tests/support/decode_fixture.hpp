// Helpers shared by the decode-loop suites: the real Qwen3 tokenizer and a
// naive reference loop that recomputes every row from scratch.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nextok/nextok.hpp"
#include "support/scripted_model.hpp"

namespace nextok::testing {

// The Qwen3 tokenizer (151,669 ids; logits rows are 151,936 wide). A missing
// file is a failure, never a skip.
inline const Tokenizer& qwen3() {
  static const Tokenizer tok =
      Tokenizer::from_dir(std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "qwen3");
  return tok;
}

inline std::int32_t qwen3_id(const char* text) {
  const auto id = qwen3().vocab().find(text);
  if (!id) throw std::runtime_error(std::string("no Qwen3 token ") + text);
  return static_cast<std::int32_t>(*id);
}

inline std::vector<std::int32_t> encode(const std::string& text) {
  const auto ids = qwen3().encode(text);
  return {ids.begin(), ids.end()};
}

inline void append(std::vector<std::int32_t>& out, const std::vector<std::int32_t>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

inline std::vector<std::int32_t> default_prompt() {
  return encode("<|im_start|>user\nHi<|im_end|>\n");
}

// Greedy decoding the slow, obvious way: argmax of a freshly computed row
// per step; `forced_at` (generated index) injects `forced` instead.
inline std::vector<std::int32_t> reference_greedy(const ScriptedModel& model,
                                                  std::vector<std::int32_t> context,
                                                  std::size_t max_tokens,
                                                  const std::vector<std::uint32_t>& eos,
                                                  std::size_t forced_at = SIZE_MAX,
                                                  std::int32_t forced = -1) {
  std::vector<std::int32_t> out;
  const std::size_t prompt_length = context.size();
  while (out.size() < max_tokens) {
    std::int32_t t;
    if (out.size() == forced_at) {
      t = forced;
    } else {
      const auto row = model.row_after(context, prompt_length);
      t = argmax(LogitsView::f32(row));
    }
    out.push_back(t);
    context.push_back(t);
    if (std::find(eos.begin(), eos.end(), static_cast<std::uint32_t>(t)) != eos.end()) break;
  }
  return out;
}

// The three ways the loop can drive a model.
enum class Drive { kHost, kThreaded, kDevicePick };
inline const char* drive_name(Drive d) {
  return d == Drive::kHost ? "host" : d == Drive::kThreaded ? "threaded" : "device_pick";
}
inline ScriptedModelOptions drive_options(Drive d, std::vector<std::int32_t> script) {
  ScriptedModelOptions o;
  o.script = std::move(script);
  o.threaded = d != Drive::kHost;
  o.device_pick = d == Drive::kDevicePick;
  return o;
}

}  // namespace nextok::testing
