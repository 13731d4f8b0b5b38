// compute_top_logprobs: log-softmax of the raw logits and the k best tokens.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/kernels.hpp"
#include "nextok/config.hpp"
#include "nextok/error.hpp"
#include "nextok/logprobs.hpp"
#include "sampling/stages.hpp"

namespace nextok {

std::optional<TokenLogprobs> compute_top_logprobs(const LogitsView& row, std::int32_t chosen,
                                                  std::uint32_t k) {
  if (k == 0) return std::nullopt;
  if (k > kMaxTopLogprobs)
    throw Error(ErrorCode::kInvalidArgument, "top_logprobs",
                "top_logprobs must be <= " + std::to_string(kMaxTopLogprobs) + ", got " +
                    std::to_string(k));
  stages::require_single_row(row);
  if (chosen < 0 || chosen >= row.vocab)
    throw Error(ErrorCode::kInvalidArgument, "token_id",
                "chosen token " + std::to_string(chosen) + " is outside [0, " +
                    std::to_string(row.vocab) + ")");
  const auto n = static_cast<std::size_t>(row.vocab);
  const auto& kern = cpu::active_kernels();

  const float* x = static_cast<const float*>(row.data);
  thread_local std::vector<float> converted;
  if (row.dtype == DType::kBF16) {
    converted.resize(n);
    kern.load_bf16(static_cast<const std::uint16_t*>(row.data), n, nullptr, converted.data());
    x = converted.data();
  }
  const auto mx = kern.argmax_f32(x, n, nullptr);
  if (mx.has_nan) stages::throw_nan();
  const float m = stages::check_max(mx.value);
  const auto r = kern.exp_weights(x, n, cpu::ExpParams{1.0f, m, nullptr}, nullptr, nullptr);
  const double lse = static_cast<double>(m) + std::log(r.total);
  auto logprob = [&](std::size_t i) {
    return static_cast<float>(static_cast<double>(x[i]) - lse);
  };

  // Keep the k best (value desc, id asc) in a small sorted array. Scanning
  // ids in ascending order, an equal value never displaces an earlier id.
  std::vector<std::pair<float, std::int32_t>> best;
  best.reserve(k + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (best.size() == k && !(v > best.back().first)) continue;
    auto pos = std::upper_bound(best.begin(), best.end(), v,
                                [](float val, const auto& e) { return val > e.first; });
    best.insert(pos, {v, static_cast<std::int32_t>(i)});
    if (best.size() > k) best.pop_back();
  }
  TokenLogprobs out;
  out.token_id = chosen;
  out.token_logprob = logprob(static_cast<std::size_t>(chosen));
  for (const auto& [v, id] : best) {
    if (v == -INFINITY) break;  // impossible tokens are not listed
    out.top.push_back({id, logprob(static_cast<std::size_t>(id))});
  }
  return out;
}

}  // namespace nextok
