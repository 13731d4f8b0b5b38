// C API errors: status mapping, the thread-local message, version queries.
#include <cstring>

#include "capi/capi_internal.hpp"
#include "nextok/mask.hpp"
#include "nextok/version.hpp"

namespace nextok::capi {
namespace {

// Fixed buffers: recording an error must not allocate (it also reports
// std::bad_alloc).
constexpr size_t kMessageBytes = 1024;
constexpr size_t kParamBytes = 256;
thread_local char t_message[kMessageBytes] = "";
thread_local char t_param[kParamBytes] = "";

void copy_truncated(char* dst, size_t cap, const char* src) noexcept {
  const size_t len = src == nullptr ? 0 : std::strlen(src);
  const size_t n = len < cap - 1 ? len : cap - 1;
  if (n > 0) std::memcpy(dst, src, n);
  dst[n] = '\0';
}

}  // namespace

nextok_status fail(nextok_status status, const char* message, const char* param) noexcept {
  copy_truncated(t_message, kMessageBytes,
                 message != nullptr && *message != '\0' ? message : nextok_status_name(status));
  copy_truncated(t_param, kParamBytes, param);
  return status;
}

void clear_error() noexcept {
  t_message[0] = '\0';
  t_param[0] = '\0';
}

nextok_status status_of(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return NEXTOK_INVALID_ARGUMENT;
    case ErrorCode::kNanLogits:
      return NEXTOK_NAN_LOGITS;
    case ErrorCode::kNonFiniteLogits:
      return NEXTOK_NON_FINITE_LOGITS;
    case ErrorCode::kNoViableToken:
      return NEXTOK_NO_VIABLE_TOKEN;
    case ErrorCode::kMaskSizeMismatch:
      return NEXTOK_MASK_SIZE_MISMATCH;
    case ErrorCode::kShapeMismatch:
      return NEXTOK_SHAPE_MISMATCH;
    case ErrorCode::kUnsupported:
      return NEXTOK_UNSUPPORTED;
    case ErrorCode::kIo:
      return NEXTOK_IO;
    case ErrorCode::kMalformedFile:
      return NEXTOK_MALFORMED_FILE;
  }
  return NEXTOK_INTERNAL;
}

}  // namespace nextok::capi

extern "C" {

const char* nextok_last_error(void) {
  return nextok::capi::t_message;
}
const char* nextok_last_error_param(void) {
  return nextok::capi::t_param;
}

const char* nextok_status_name(nextok_status status) {
  switch (status) {
    case NEXTOK_OK:
      return "ok";
    case NEXTOK_BUFFER_TOO_SMALL:
      return "buffer_too_small";
    case NEXTOK_OUT_OF_MEMORY:
      return "out_of_memory";
    case NEXTOK_INTERNAL:
      return "internal";
    case NEXTOK_INVALID_ARGUMENT:
      return nextok::error_code_name(nextok::ErrorCode::kInvalidArgument);
    case NEXTOK_NAN_LOGITS:
      return nextok::error_code_name(nextok::ErrorCode::kNanLogits);
    case NEXTOK_NON_FINITE_LOGITS:
      return nextok::error_code_name(nextok::ErrorCode::kNonFiniteLogits);
    case NEXTOK_NO_VIABLE_TOKEN:
      return nextok::error_code_name(nextok::ErrorCode::kNoViableToken);
    case NEXTOK_MASK_SIZE_MISMATCH:
      return nextok::error_code_name(nextok::ErrorCode::kMaskSizeMismatch);
    case NEXTOK_SHAPE_MISMATCH:
      return nextok::error_code_name(nextok::ErrorCode::kShapeMismatch);
    case NEXTOK_UNSUPPORTED:
      return nextok::error_code_name(nextok::ErrorCode::kUnsupported);
    case NEXTOK_IO:
      return nextok::error_code_name(nextok::ErrorCode::kIo);
    case NEXTOK_MALFORMED_FILE:
      return nextok::error_code_name(nextok::ErrorCode::kMalformedFile);
  }
  return "unknown";
}

const char* nextok_version(void) {
  return nextok::kVersion;
}
uint32_t nextok_abi_version(void) {
  return NEXTOK_ABI_VERSION;
}
size_t nextok_bitmask_words(size_t vocab_size) {
  return nextok::bitmask_words(vocab_size);
}

}  // extern "C"
