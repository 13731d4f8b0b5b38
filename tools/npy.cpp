#include "npy.hpp"

#include <charconv>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "nextok/error.hpp"

namespace nextok::tools {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(ErrorCode::kIo, "logits", path + ": " + why);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open file");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t hlen = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated header");
    hlen = static_cast<std::uint32_t>(b[0] | (b[1] << 8));
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated header");
    hlen = static_cast<std::uint32_t>(b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24));
  } else {
    fail(path, "unsupported .npy version " + std::to_string(major));
  }
  if (hlen > (1U << 20)) fail(path, "header too large");
  std::string header(hlen, '\0');
  if (!f.read(header.data(), hlen)) fail(path, "truncated header");

  NpyArray a;
  std::smatch mm;
  if (!std::regex_search(header, mm, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    fail(path, "header has no descr");
  a.descr = mm[1];
  if (a.descr != "<f4" && a.descr != "<u2")
    fail(path, "dtype '" + a.descr +
                   "' is not supported; use float32 ('<f4') or bf16 stored as uint16 ('<u2')");
  if (std::regex_search(header, mm, std::regex(R"('fortran_order'\s*:\s*True)")))
    fail(path, "Fortran-order arrays are not supported");
  if (!std::regex_search(header, mm, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    fail(path, "header has no shape");
  std::stringstream ss(mm[1].str());
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const auto last = item.find_last_not_of(" \t");
    // The whole entry is the number: "12abc" is not a dimension of 12.
    std::int64_t d = 0;
    const char* end = item.data() + last + 1;
    const auto [p, ec] = std::from_chars(item.data() + first, end, d);
    if (ec != std::errc{} || p != end) fail(path, "bad shape entry '" + item + "'");
    a.shape.push_back(d);
  }
  if (a.shape.empty() || a.shape.size() > 2) fail(path, "expected a 1-D [V] or 2-D [B, V] array");
  std::int64_t count = 1;
  for (auto d : a.shape) {
    if (d <= 0 || d > (std::int64_t{1} << 31)) fail(path, "bad dimension " + std::to_string(d));
    count *= d;
  }
  if (count > (std::int64_t{1} << 32)) fail(path, "array too large");
  const std::size_t elem = a.descr == "<f4" ? 4 : 2;
  a.bytes.resize(static_cast<std::size_t>(count) * elem);
  if (!f.read(reinterpret_cast<char*>(a.bytes.data()),
              static_cast<std::streamsize>(a.bytes.size())))
    fail(path, "file is shorter than its shape says");
  return a;
}

void write_npy_f32(const std::string& path, const float* data, std::int64_t rows,
                   std::int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::kIo, "path", path + ": cannot write");
  f.write("\x93NUMPY\x01\x00", 8);
  const auto hl = static_cast<std::uint16_t>(header.size());
  const char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  f.write(hb, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data),
          static_cast<std::streamsize>(rows * cols * static_cast<std::int64_t>(sizeof(float))));
}

}  // namespace nextok::tools
