// Typed errors. Every fallible public call throws nextok::Error; nothing in
// the library aborts or prints on user input.
#pragma once

#include <stdexcept>
#include <string>

namespace nextok {

enum class ErrorCode {
  kInvalidArgument,   // a parameter is out of range; param() names it
  kNanLogits,         // a NaN was found in the logits row
  kNonFiniteLogits,   // +Inf logit where a probability must be formed
  kNoViableToken,     // every token is masked or has a -Inf logit
  kMaskSizeMismatch,  // the bitmask does not have ceil(V/32) words
  kShapeMismatch,     // LogitsView shape or row index is invalid
  kUnsupported,       // a dtype/device/feature this build does not implement
  kIo,                // a file could not be read
  kMalformedFile,     // a file was read but its content is invalid or truncated
};

const char* error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string param, const std::string& message)
      : std::runtime_error(message), code_(code), param_(std::move(param)) {}

  ErrorCode code() const noexcept { return code_; }
  // The offending parameter ("top_p", "mask", …); empty when not applicable.
  const std::string& param() const noexcept { return param_; }

 private:
  ErrorCode code_;
  std::string param_;
};

}  // namespace nextok
