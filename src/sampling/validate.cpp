// Parameter validation and the small enum/name helpers.
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include "nextok/config.hpp"
#include "nextok/error.hpp"
#include "nextok/logits.hpp"

namespace nextok {
namespace {

[[noreturn]] void bad(const char* param, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, param, std::string(param) + ": " + why);
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNanLogits:
      return "nan_logits";
    case ErrorCode::kNonFiniteLogits:
      return "non_finite_logits";
    case ErrorCode::kNoViableToken:
      return "no_viable_token";
    case ErrorCode::kMaskSizeMismatch:
      return "mask_size_mismatch";
    case ErrorCode::kShapeMismatch:
      return "shape_mismatch";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kMalformedFile:
      return "malformed_file";
  }
  return "unknown";
}

const char* dtype_name(DType dtype) noexcept {
  return dtype == DType::kF32 ? "f32" : "bf16";
}

// One table names every filter order, for printing, parsing and the error.
constexpr std::pair<FilterOrder, const char*> kFilterOrders[] = {
    {FilterOrder::kSpec, "spec"},
    {FilterOrder::kMlxLm, "mlx_lm"},
    {FilterOrder::kTopKFirst, "top_k_first"}};

const char* filter_order_name(FilterOrder order) noexcept {
  for (const auto& [o, name] : kFilterOrders)
    if (o == order) return name;
  return "unknown";
}

FilterOrder parse_filter_order(const char* text) {
  constexpr std::size_t n = std::size(kFilterOrders);
  std::string expected;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::strcmp(text, kFilterOrders[i].second) == 0) return kFilterOrders[i].first;
    expected += i == 0 ? "'" : (i + 1 == n ? " or '" : ", '");
    expected += std::string(kFilterOrders[i].second) + "'";
  }
  bad("filter_order", "expected " + expected + ", got '" + text + "'");
}

void SamplerConfig::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    bad("temperature", "must be finite and >= 0 (below " + num(kGreedyTemperature) +
                           " = greedy), got " + num(temperature));
  // Only 0 < top_p < 1 filters; 0 (mlx-lm's default) and >= 1 are off.
  if (!std::isfinite(top_p) || top_p < 0.0f)
    bad("top_p", "must be finite and >= 0 (0 or >= 1 = off), got " + num(top_p));
  if (top_k < 0) bad("top_k", "must be >= 0 (0 = off), got " + std::to_string(top_k));
  if (std::isnan(min_p) || !(min_p >= 0.0f && min_p <= 1.0f))
    bad("min_p", "must be in [0, 1] (0 = off), got " + num(min_p));
  if (top_logprobs_k > kMaxTopLogprobs)
    bad("top_logprobs", "must be <= " + std::to_string(kMaxTopLogprobs) + ", got " +
                            std::to_string(top_logprobs_k));
}

void PenaltyConfig::validate() const {
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    bad("repetition_penalty", "must be finite and > 0 (1 = off), got " + num(repetition_penalty));
  if (!std::isfinite(presence_penalty))
    bad("presence_penalty", "must be finite, got " + num(presence_penalty));
  if (!std::isfinite(frequency_penalty))
    bad("frequency_penalty", "must be finite, got " + num(frequency_penalty));
  for (const auto& [id, bias] : logit_bias) {
    if (std::isnan(bias) || bias == INFINITY)
      bad("logit_bias", "bias for token " + std::to_string(id) +
                            " must be finite or -inf (to ban it), got " + num(bias));
  }
}

LogitsView LogitsView::row(std::int64_t b) const {
  if (b < 0 || b >= rows)
    throw Error(ErrorCode::kShapeMismatch, "row",
                "row " + std::to_string(b) + " out of range for " + std::to_string(rows) + " rows");
  LogitsView r = *this;
  r.data = static_cast<const char*>(data) +
           static_cast<std::size_t>(b) * static_cast<std::size_t>(vocab) * element_size();
  r.rows = 1;
  return r;
}

void LogitsView::validate_cpu() const {
  if (device != Device::kCPU)
    throw Error(ErrorCode::kUnsupported, "device",
                "logits are on a CUDA device but this call is the CPU path; copy them to the "
                "host or use the CUDA backend");
  if (dtype != DType::kF32 && dtype != DType::kBF16)
    throw Error(ErrorCode::kUnsupported, "dtype", "logits dtype must be f32 or bf16");
  if (vocab <= 0 || vocab > (std::int64_t{1} << 31) - 1 || rows <= 0)
    throw Error(ErrorCode::kShapeMismatch, "logits",
                "logits shape must be [B, V] with B >= 1 and 1 <= V < 2^31, got [" +
                    std::to_string(rows) + ", " + std::to_string(vocab) + "]");
  if (data == nullptr) throw Error(ErrorCode::kShapeMismatch, "logits", "logits data is null");
}

}  // namespace nextok
