// Greedy paths: plain argmax, masked argmax, argmax after penalties.
#include <string>

#include "backend/cpu/kernels.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"
#include "sampling/stages.hpp"

namespace nextok {
namespace {

std::int32_t checked(const cpu::ArgmaxResult& r) {
  if (r.has_nan) stages::throw_nan();
  if (r.index < 0)
    throw Error(ErrorCode::kNoViableToken, "logits",
                "no token can be chosen: every allowed token has a -inf logit");
  return static_cast<std::int32_t>(r.index);
}

std::int32_t argmax_row(const LogitsView& row, const std::uint32_t* mask) {
  const auto& k = cpu::active_kernels();
  const auto n = static_cast<std::size_t>(row.vocab);
  return checked(row.dtype == DType::kF32
                     ? k.argmax_f32(static_cast<const float*>(row.data), n, mask)
                     : k.argmax_bf16(static_cast<const std::uint16_t*>(row.data), n, mask));
}

}  // namespace

std::int32_t argmax(const LogitsView& row) {
  stages::require_single_row(row);
  return argmax_row(row, nullptr);
}

void argmax_rows(const LogitsView& logits, std::span<std::int32_t> out) {
  logits.validate_cpu();
  if (static_cast<std::int64_t>(out.size()) != logits.rows)
    throw Error(ErrorCode::kShapeMismatch, "out",
                "output span has " + std::to_string(out.size()) + " slots for " +
                    std::to_string(logits.rows) + " rows");
  for (std::int64_t b = 0; b < logits.rows; ++b)
    out[static_cast<std::size_t>(b)] = argmax_row(logits.row(b), nullptr);
}

std::int32_t apply_mask_argmax(const LogitsView& row, std::span<const std::uint32_t> mask) {
  stages::require_single_row(row);
  if (mask.empty())
    throw Error(ErrorCode::kMaskSizeMismatch, "mask", "apply_mask_argmax needs a bitmask");
  stages::check_mask_size(mask, row.vocab);
  return argmax_row(row, mask.data());
}

std::int32_t argmax_with_penalties(const StepInput& in, const PenaltyConfig& penalties,
                                   Workspace& ws) {
  penalties.validate();
  auto& w = ws.impl();
  stages::load_masked(in, w);
  const std::span<float> row(w.w.data(), static_cast<std::size_t>(in.logits.vocab));
  stages::apply_penalties(row, penalties, in.history, FilterOrder::kSpec, w);
  return checked(cpu::active_kernels().argmax_f32(row.data(), row.size(), nullptr));
}

}  // namespace nextok
