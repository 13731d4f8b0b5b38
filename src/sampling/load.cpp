// Stage 1: row → float32 working copy with forbidden tokens at -Inf.
#include <cmath>
#include <string>

#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "sampling/stages.hpp"

namespace nextok::stages {

void check_mask_size(std::span<const std::uint32_t> mask, std::int64_t vocab) {
  if (!mask.empty() && mask.size() != bitmask_words(static_cast<std::size_t>(vocab)))
    throw Error(ErrorCode::kMaskSizeMismatch, "mask",
                "token bitmask has " + std::to_string(mask.size()) + " words but V=" +
                    std::to_string(vocab) + " needs " +
                    std::to_string(bitmask_words(static_cast<std::size_t>(vocab))));
}

[[noreturn]] void throw_nan() {
  throw Error(ErrorCode::kNanLogits, "logits",
              "logits contain NaN; the model step produced invalid values");
}

void require_single_row(const LogitsView& v) {
  v.validate_cpu();
  if (v.rows != 1)
    throw Error(ErrorCode::kShapeMismatch, "logits",
                "expected one row [1, V], got " + std::to_string(v.rows) +
                    " rows; use LogitsView::row(b) (or argmax_rows) for batches");
}

ActiveFilters active_filters(const SamplerConfig& c, std::int64_t vocab) {
  return {c.top_p > 0.0f && c.top_p < 1.0f, c.min_p > 0.0f, c.top_k > 0 && c.top_k < vocab};
}

void load_masked(const StepInput& in, Workspace::Impl& ws) {
  const LogitsView& v = in.logits;
  require_single_row(v);
  check_mask_size(in.mask, v.vocab);
  const auto n = static_cast<std::size_t>(v.vocab);
  ws.reserve(n);
  const std::uint32_t* mask = in.mask.empty() ? nullptr : in.mask.data();
  const auto& k = cpu::active_kernels();
  const bool nan = v.dtype == DType::kF32
                       ? k.load_f32(static_cast<const float*>(v.data), n, mask, ws.w.data())
                       : k.load_bf16(static_cast<const std::uint16_t*>(v.data), n, mask,
                                     ws.w.data());
  if (nan) throw_nan();
}

float checked_max(std::span<const float> w) {
  return check_max(cpu::active_kernels().max_f32(w.data(), w.size()));
}

float check_max(float m) {
  if (m == -INFINITY)
    throw Error(ErrorCode::kNoViableToken, "logits",
                "no token can be chosen: every token is masked, banned by logit_bias, or has a "
                "-inf logit");
  if (m == INFINITY)
    throw Error(ErrorCode::kNonFiniteLogits, "logits",
                "logits contain +inf, so no probability distribution exists");
  return m;
}

}  // namespace nextok::stages
