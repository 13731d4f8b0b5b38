// The CUDA API in a build without CUDA: every call is kUnsupported.
#include "nextok/cuda.hpp"
#include "nextok/error.hpp"

namespace nextok::cuda {
namespace {
[[noreturn]] void unsupported() {
  throw Error(ErrorCode::kUnsupported, "device",
              "this build has no CUDA backend (NEXTOK_CUDA=OFF)");
}
}  // namespace

struct Context::Impl {};

bool built_with_cuda() noexcept {
  return false;
}
bool device_available() noexcept {
  return false;
}

Context::Context() {
  unsupported();
}
Context::~Context() = default;
void Context::argmax(const LogitsView&, const std::uint32_t*, std::int32_t*, std::int32_t*) {
  unsupported();
}
void Context::sample(const LogitsView&, std::span<const RowParams>, const PipelineInputs&,
                     RngState*, const PipelineOutputs&) {
  unsupported();
}
void Context::top_logprobs(const LogitsView&, std::span<const std::uint32_t>, const std::int32_t*,
                           const LogprobsOutputs&) {
  unsupported();
}
void Context::apply_token_bitmask(void*, DType, std::int64_t, std::int64_t, const std::uint32_t*,
                                  std::int64_t, void*) {
  unsupported();
}
void Context::reserve(std::int64_t, std::int64_t) {
  unsupported();
}
void Context::sample_device_params(const LogitsView&, const RowParams*, const PipelineInputs&,
                                   RngState*, const PipelineOutputs&) {
  unsupported();
}
void Context::top_logprobs_device_k(const LogitsView&, const std::uint32_t*, const std::int32_t*,
                                    const LogprobsOutputs&) {
  unsupported();
}

}  // namespace nextok::cuda
