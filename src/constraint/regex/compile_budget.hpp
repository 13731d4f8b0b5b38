// What one compile (a schema, a grammar, a regex, a choice) may spend: the
// memory its structures hold, its wall clock and a cancel flag. A Scope
// installs the budget on the compiling thread for the compile's extent; the
// constructions that grow (subset and product automata, NFAs, grammars'
// regular-part DFAs, the parsed schema, the schema compiler's nodes and kept
// DFAs) charge it, so every front-end is bounded without passing the budget
// through each signature. Outside a scope, charging costs a thread-local read
// and does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace nextok {
struct ConstraintLimits;
}

namespace nextok::constraint {

class CompileBudget {
 public:
  // Installs a budget on this thread until destroyed. Inside another scope
  // it adds nothing: the outer compile's budget governs, and its peak
  // includes the inner compile.
  class Scope {
   public:
    // max_compile_bytes, max_compile_ms and cancel (0 or null: none).
    explicit Scope(const ConstraintLimits& limits);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    // Bytes held at the peak so far (of the outermost scope).
    size_t peak_bytes() const noexcept;

   private:
    std::unique_ptr<CompileBudget> owned_;
  };

  // Takes `bytes` more; past max_bytes, Error{kInvalidArgument,
  // "max_compile_bytes"} naming the limit. Also checks time and cancel.
  static void charge(size_t bytes);
  static void release(size_t bytes) noexcept;
  // Throws past the deadline (param "max_compile_ms") or once cancelled
  // (param "cancelled").
  static void check();

 private:
  explicit CompileBudget(const ConstraintLimits& limits);
  size_t max_bytes_;
  uint32_t max_ms_;
  const std::atomic<bool>* cancel_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  size_t held_ = 0, peak_ = 0;
  uint32_t checks_ = 0;
};

// Bytes one growing structure holds: set to its current size as it grows,
// released when it goes out of scope.
class ChargedBytes {
 public:
  ChargedBytes() = default;
  ~ChargedBytes() { CompileBudget::release(held_); }
  ChargedBytes(const ChargedBytes&) = delete;
  ChargedBytes& operator=(const ChargedBytes&) = delete;
  void hold(size_t bytes) {
    if (bytes > held_) {
      CompileBudget::charge(bytes - held_);
    } else {
      CompileBudget::release(held_ - bytes);
    }
    held_ = bytes;
  }

 private:
  size_t held_ = 0;
};

}  // namespace nextok::constraint
