// LogitsView: a non-owning view of a [B, V] logits tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace nextok {

enum class DType : std::uint8_t { kF32, kBF16 };
enum class Device : std::uint8_t { kCPU, kCUDA };

const char* dtype_name(DType dtype) noexcept;

// bf16 values are stored as their raw uint16_t bit patterns (the upper half of
// an IEEE float32), which is how numpy and torch hand them over.
struct LogitsView {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  std::int64_t rows = 1;   // B
  std::int64_t vocab = 0;  // V
  Device device = Device::kCPU;
  // For Device::kCUDA views: the cudaStream_t the CUDA backend enqueues on
  // (nullptr = the legacy default stream). Ignored on the CPU path.
  void* stream = nullptr;

  static LogitsView f32(std::span<const float> row) noexcept {
    return {row.data(), DType::kF32, 1, static_cast<std::int64_t>(row.size()), Device::kCPU};
  }
  static LogitsView bf16(std::span<const std::uint16_t> row) noexcept {
    return {row.data(), DType::kBF16, 1, static_cast<std::int64_t>(row.size()), Device::kCPU};
  }
  static LogitsView f32_rows(const float* data, std::int64_t rows, std::int64_t vocab) noexcept {
    return {data, DType::kF32, rows, vocab, Device::kCPU};
  }
  // A [rows, V] tensor in device memory, enqueued on `stream`.
  static LogitsView cuda_rows(const void* data, DType dtype, std::int64_t rows, std::int64_t vocab,
                              void* stream = nullptr) noexcept {
    return {data, dtype, rows, vocab, Device::kCUDA, stream};
  }

  std::size_t element_size() const noexcept { return dtype == DType::kF32 ? 4 : 2; }

  // One row as a [1, V] view. Throws kShapeMismatch when b is out of range.
  LogitsView row(std::int64_t b) const;

  // Throws kShapeMismatch / kUnsupported unless this is a usable CPU view.
  void validate_cpu() const;
};

// Imports a DLPack tensor (a pointer to a `DLTensor`, DLPack >= 0.5 layout):
// 1-D [V] or 2-D [B, V], row-major and contiguous, float32 or bfloat16, on
// kDLCPU or kDLCUDA. Throws kUnsupported (dtype, device, strides) or
// kShapeMismatch. The view does not own the memory.
LogitsView logits_from_dlpack(const void* dl_tensor, void* stream = nullptr);

}  // namespace nextok
