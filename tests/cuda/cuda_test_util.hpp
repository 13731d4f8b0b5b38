// Helpers for the GPU tests: device buffers and random batches.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backend/cpu/bf16.hpp"
#include "nextok/nextok.hpp"

namespace nextok::test {

#define NEXTOK_CUDA_OK(x) ASSERT_EQ(cudaSuccess, (x)) << cudaGetErrorString(x)

template <typename T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  Dev() = default;
  explicit Dev(const std::vector<T>& h) : n(h.size()) {
    cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(1, n) * sizeof(T));
    if (n != 0) cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  explicit Dev(std::size_t count) : n(count) {
    cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(1, n) * sizeof(T));
    cudaMemset(p, 0xFF, std::max<std::size_t>(1, n) * sizeof(T));
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() {
    if (p != nullptr) cudaFree(p);
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    if (n != 0) cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

// A [B, V] batch held both as float (what the host reads) and in its dtype.
struct Batch {
  std::int64_t rows = 0, vocab = 0;
  DType dtype = DType::kF32;
  std::vector<float> f32;
  std::vector<std::uint16_t> bf16;

  LogitsView host_row(std::int64_t b) const {
    if (dtype == DType::kF32)
      return LogitsView::f32({f32.data() + b * vocab, static_cast<std::size_t>(vocab)});
    return LogitsView::bf16({bf16.data() + b * vocab, static_cast<std::size_t>(vocab)});
  }
};

// Fills b.bf16 from b.f32 and rounds b.f32 to the bf16 values (what the
// host then reads).
inline void round_to_bf16(Batch& b) {
  b.bf16.resize(b.f32.size());
  for (std::size_t i = 0; i < b.f32.size(); ++i) {
    b.bf16[i] = cpu::f32_to_bf16(b.f32[i]);
    b.f32[i] = cpu::bf16_to_f32(b.bf16[i]);
  }
}

// Logits with a per-row spread; `ties` rounds to a coarse grid so equal
// values (and, in bf16, equal weights) are common.
inline Batch random_batch(std::mt19937_64& g, std::int64_t rows, std::int64_t vocab, DType dt) {
  Batch b;
  b.rows = rows;
  b.vocab = vocab;
  b.dtype = dt;
  b.f32.resize(static_cast<std::size_t>(rows * vocab));
  std::uniform_real_distribution<float> spread(0.5f, 8.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::normal_distribution<float> n(0.0f, spread(g));
    const bool ties = g() % 4 == 0;
    for (std::int64_t i = 0; i < vocab; ++i) {
      float x = n(g);
      if (ties) x = std::round(x * 4.0f) / 4.0f;
      b.f32[static_cast<std::size_t>(r * vocab + i)] = x;
    }
  }
  if (dt == DType::kBF16) round_to_bf16(b);
  return b;
}

struct DevLogits {
  Dev<float> f;
  Dev<std::uint16_t> h;
  LogitsView view;
  explicit DevLogits(const Batch& b)
      : f(b.dtype == DType::kF32 ? b.f32 : std::vector<float>{}),
        h(b.dtype == DType::kBF16 ? b.bf16 : std::vector<std::uint16_t>{}) {
    const void* p = b.dtype == DType::kF32 ? static_cast<const void*>(f.p) : h.p;
    view = LogitsView::cuda_rows(p, b.dtype, b.rows, b.vocab);
  }
};

inline cuda::RowStatus expected_status(ErrorCode c) {
  switch (c) {
    case ErrorCode::kNanLogits:
      return cuda::RowStatus::kNanLogits;
    case ErrorCode::kNoViableToken:
      return cuda::RowStatus::kNoViableToken;
    case ErrorCode::kNonFiniteLogits:
      return cuda::RowStatus::kNonFiniteLogits;
    default:
      return cuda::RowStatus::kBadHistory;
  }
}

inline bool gpu_present() {
  return cuda::device_available();
}

}  // namespace nextok::test
