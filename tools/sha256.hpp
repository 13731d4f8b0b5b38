// SHA-256 (FIPS 180-4), incremental, for verifying downloaded model files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace nextok::util {

class Sha256 {
 public:
  using Digest = std::array<std::byte, 32>;

  Sha256() noexcept { reset(); }

  void update(std::span<const std::byte> data) noexcept;
  void update(std::string_view data) noexcept;
  // Pads, returns the digest and resets to the empty-message state.
  Digest finish() noexcept;
  // finish() as 64 lowercase hex digits.
  std::string hex();
  void reset() noexcept;

 private:
  void compress(const std::byte* block) noexcept;

  std::array<uint32_t, 8> state_{};
  std::array<std::byte, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes hashed so far
};

std::string to_hex(std::span<const std::byte> bytes);

// Lowercase hex SHA-256 of a file, read in chunks. Throws Error{kIo} when the
// file cannot be opened or read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace nextok::util
