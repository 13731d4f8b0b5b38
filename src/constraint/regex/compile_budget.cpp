#include "constraint/regex/compile_budget.hpp"

#include <algorithm>
#include <string>

#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"

namespace nextok::constraint {

namespace {
thread_local CompileBudget* current = nullptr;

std::string mib(size_t bytes) {
  return std::to_string((bytes + (1u << 19)) >> 20) + " MiB";
}
}  // namespace

CompileBudget::CompileBudget(const ConstraintLimits& limits)
    : max_bytes_(limits.max_compile_bytes), max_ms_(limits.max_compile_ms), cancel_(limits.cancel) {
  if (max_ms_) deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms_);
}

CompileBudget::Scope::Scope(const ConstraintLimits& limits) {
  if (current) return;
  owned_.reset(new CompileBudget(limits));
  current = owned_.get();
}

CompileBudget::Scope::~Scope() {
  if (!owned_) return;
  current = nullptr;
}

size_t CompileBudget::Scope::peak_bytes() const noexcept {
  const CompileBudget* b = owned_ ? owned_.get() : current;
  return b ? b->peak_ : 0;
}

void CompileBudget::charge(size_t bytes) {
  CompileBudget* b = current;
  if (!b) return;
  if (b->max_bytes_ && bytes > b->max_bytes_ - std::min(b->held_, b->max_bytes_)) {
    const size_t limit = b->max_bytes_;
    throw Error(ErrorCode::kInvalidArgument, "max_compile_bytes",
                "compiling needs more than max_compile_bytes = " + std::to_string(limit) +
                    " bytes (" + mib(limit) + ") of memory");
  }
  b->held_ += bytes;
  b->peak_ = std::max(b->peak_, b->held_);
  check();
}

void CompileBudget::release(size_t bytes) noexcept {
  CompileBudget* b = current;
  if (!b) return;
  b->held_ = bytes > b->held_ ? 0 : b->held_ - bytes;
}

void CompileBudget::check() {
  CompileBudget* b = current;
  if (!b) return;
  // The clock costs ~20 ns; charges come per automaton state, so reading it
  // every 64th keeps the overshoot far below a millisecond.
  if ((++b->checks_ & 63u) != 0) return;
  if (b->cancel_ && b->cancel_->load(std::memory_order_relaxed))
    throw Error(ErrorCode::kInvalidArgument, "cancelled", "compile cancelled");
  if (b->deadline_ && std::chrono::steady_clock::now() > *b->deadline_) {
    throw Error(ErrorCode::kInvalidArgument, "max_compile_ms",
                "compiling needs more than max_compile_ms = " + std::to_string(b->max_ms_) + " ms");
  }
}

}  // namespace nextok::constraint
