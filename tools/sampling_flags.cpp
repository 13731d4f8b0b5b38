#include "sampling_flags.hpp"

#include <charconv>
#include <sstream>
#include <utility>

#include "nextok/error.hpp"

namespace nextok::tools {
namespace {

[[noreturn]] void bad(const char* flag, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, flag, std::string("--") + flag + ": " + why);
}

}  // namespace

std::int32_t parse_token_id(std::string_view s, const char* flag) {
  // from_chars takes no '+' or spaces; the first-digit test rules out '-'
  // and leading zeros, so every id has exactly one spelling.
  if (!s.empty() && s[0] >= '0' && s[0] <= '9' && (s[0] != '0' || s.size() == 1)) {
    std::int32_t id = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
    if (ec == std::errc{} && p == s.data() + s.size()) return id;
  }
  bad(flag, "'" + std::string(s) +
                "' is not a token id (a decimal integer in [0, 2^31) without sign, spaces or "
                "leading zeros)");
}

void SamplingFlags::add_to(CLI::App& app) {
  app.add_option("--temperature", temperature, "Temperature; below 1e-5 (0 included) = greedy")
      ->capture_default_str();
  app.add_option("--top-p", top_p, "Nucleus mass; filters only in (0, 1): 0 and >= 1 = off")
      ->capture_default_str();
  app.add_option("--top-k", top_k, "Keep the k most likely tokens; 0 = off")->capture_default_str();
  app.add_option("--min-p", min_p, "Drop tokens below min_p * max prob; 0 = off")
      ->capture_default_str();
  app.add_option("--repetition-penalty", repetition_penalty, "Sign-aware penalty; 1 = off")
      ->capture_default_str();
  app.add_option("--presence-penalty", presence_penalty, "Subtracted once per windowed id")
      ->capture_default_str();
  app.add_option("--frequency-penalty", frequency_penalty, "Subtracted per windowed occurrence")
      ->capture_default_str();
  app.add_option("--logit-bias", logit_bias, "ID=BIAS, repeatable; BIAS may be -inf");
  app.add_option("--history", history, "Penalty window token ids, oldest first: ID,ID,...");
  app.add_option("--window", window, "Penalty window size")->capture_default_str();
  app.add_option("--filter-order", filter_order, "spec | mlx_lm | top_k_first")
      ->capture_default_str();
  app.add_option("--seed", seed, "PCG32 seed")->capture_default_str();
}

SamplerConfig SamplingFlags::sampler() const {
  SamplerConfig c;
  c.temperature = temperature;
  c.top_p = top_p;
  c.top_k = top_k;
  c.min_p = min_p;
  c.seed = seed;
  c.filter_order = parse_filter_order(filter_order.c_str());
  c.validate();
  return c;
}

PenaltyConfig SamplingFlags::penalties(std::int64_t vocab) const {
  PenaltyConfig p;
  p.repetition_penalty = repetition_penalty;
  p.presence_penalty = presence_penalty;
  p.frequency_penalty = frequency_penalty;
  p.window = window;
  for (const std::string& item : logit_bias) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) bad("logit-bias", "expected ID=BIAS, got '" + item + "'");
    const std::int32_t id = parse_token_id(std::string_view(item).substr(0, eq), "logit-bias");
    // The library skips ids outside the row; a flag naming one is a mistake.
    if (id >= vocab) {
      bad("logit-bias", "token " + std::to_string(id) + " is outside the vocabulary [0, " +
                            std::to_string(vocab) + ")");
    }
    const std::string v = item.substr(eq + 1);
    float bias = 0.0f;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), bias);
    if (ec != std::errc{} || end != v.data() + v.size())
      bad("logit-bias", "'" + v + "' is not a float or -inf");
    p.logit_bias.emplace_back(id, bias);
  }
  p.validate();
  return p;
}

std::vector<std::int32_t> SamplingFlags::history_ids() const {
  std::vector<std::int32_t> ids;
  std::stringstream ss(history);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) ids.push_back(parse_token_id(item, "history"));
  }
  return ids;
}

void LogitsFlags::add_to(CLI::App& app) {
  app.add_option("--logits", path, "Logits .npy file: [V] or [B, V]")->required();
  app.add_option("--dtype", dtype, "f32, or bf16 for uint16 bit patterns")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  app.add_option("--row", row, "Row of a [B, V] file")->capture_default_str();
}

LoadedLogits load_logits(const LogitsFlags& flags) {
  LoadedLogits l{read_npy(flags.path), {}};
  const bool bf16 = flags.dtype == "bf16";
  if (bf16 != (l.array.descr == "<u2"))
    throw Error(ErrorCode::kIo, "dtype",
                flags.path + ": file holds " + l.array.descr + " but --dtype is " + flags.dtype +
                    " (f32 needs '<f4', bf16 needs '<u2')");
  const LogitsView all{l.array.bytes.data(), bf16 ? DType::kBF16 : DType::kF32, l.array.rows(),
                       l.array.cols(), Device::kCPU};
  l.view = all.row(flags.row);
  return l;
}

PreparedStep prepare_step(const LogitsFlags& logits, const SamplingFlags& sampling) {
  LoadedLogits l = load_logits(logits);
  const std::int64_t vocab = l.view.vocab;
  return {std::move(l), sampling.sampler(), sampling.penalties(vocab), sampling.history_ids()};
}

}  // namespace nextok::tools
