// y = W x for a ggml weight matrix (rows of `cols` elements) and a batch of
// activation vectors, with the activations quantized as ggml does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/cpu/thread_pool.hpp"

namespace nextok::model {

struct WeightMatrix {
  std::uint32_t type = 0;  // ggml type: F32, F16, Q4_0, Q4_1, Q8_0
  std::size_t cols = 0;    // ne0: input size
  std::size_t rows = 0;    // ne1: output size
  const std::byte* data = nullptr;
  std::size_t row_bytes = 0;
  const std::byte* row(std::size_t r) const noexcept { return data + r * row_bytes; }
};

// Whether the runtime has a dot product for this ggml type.
bool matmul_supports(std::uint32_t ggml_type) noexcept;
// Bytes of one row of `cols` elements; 0 for unsupported types or a bad width.
std::size_t row_bytes(std::uint32_t ggml_type, std::size_t cols) noexcept;

class Matmul {
 public:
  // y[t * w.rows + r] = dot(row r of w, x[t * w.cols ...]) for t < n.
  void operator()(const WeightMatrix& w, const float* x, std::size_t n, float* y, ThreadPool& pool);

 private:
  std::vector<std::byte> quantized_;  // the activations in the weight's dot type
};

}  // namespace nextok::model
