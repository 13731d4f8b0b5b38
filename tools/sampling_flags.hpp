// The sampling flags shared by `explain`, `sample` (and later `generate`).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/config.hpp"
#include "nextok/logits.hpp"
#include "npy.hpp"

namespace nextok::tools {

struct SamplingFlags {
  float temperature = 1.0f;
  float top_p = 1.0f;
  std::int32_t top_k = 0;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::vector<std::string> logit_bias;  // "ID=BIAS"
  std::string history;                  // "ID,ID,…"
  std::uint32_t window = kDefaultPenaltyWindow;
  std::string filter_order = "spec";
  std::uint64_t seed = kDefaultSeed;

  void add_to(CLI::App& app);
  // Throws nextok::Error{kInvalidArgument} on malformed flags.
  SamplerConfig sampler() const;
  // --logit-bias ids must lie in [0, vocab): the row the bias applies to.
  PenaltyConfig penalties(std::int64_t vocab) const;
  std::vector<std::int32_t> history_ids() const;
};

// A token id flag value: the canonical decimal spelling of an id in
// [0, 2^31) ("7", not "+7", "07" or " 7"). Throws kInvalidArgument naming
// the flag otherwise.
std::int32_t parse_token_id(std::string_view s, const char* flag);

// --logits FILE --dtype f32|bf16 --row B
struct LogitsFlags {
  std::string path;
  std::string dtype = "f32";
  std::int64_t row = 0;
  void add_to(CLI::App& app);
};

struct LoadedLogits {
  NpyArray array;
  LogitsView view;  // the selected row
};
LoadedLogits load_logits(const LogitsFlags& flags);

// Everything a command needs for one step, parsed and validated.
struct PreparedStep {
  LoadedLogits logits;
  SamplerConfig sampler;
  PenaltyConfig penalties;
  std::vector<std::int32_t> history;
};
PreparedStep prepare_step(const LogitsFlags& logits, const SamplingFlags& sampling);

}  // namespace nextok::tools
