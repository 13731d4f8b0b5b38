// Minimal .npy reader/writer: little-endian float32 ('<f4') and uint16
// ('<u2', read as bf16 bit patterns), C order, 1-D or 2-D.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nextok::tools {

struct NpyArray {
  std::string descr;  // "<f4" or "<u2"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // raw element data
  std::int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  std::int64_t cols() const { return shape.back(); }
};

// Throws nextok::Error{kIo} with a message naming the file and the problem.
NpyArray read_npy(const std::string& path);
void write_npy_f32(const std::string& path, const float* data, std::int64_t rows,
                   std::int64_t cols);

}  // namespace nextok::tools
