// A read-only memory map of a whole file; released when the last owner goes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace nextok::util {

class MappedFile {
 public:
  // Throws Error{kIo, param} naming `what` ("GGUF file", "tokenizer") and the
  // path when the file cannot be opened, is not a regular file, or cannot be
  // mapped. An empty file maps to an empty view.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path,
                                                const std::string& what, const std::string& param);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view view() const noexcept { return {static_cast<const char*>(addr_), size_}; }
  const void* data() const noexcept { return addr_; }
  size_t size() const noexcept { return size_; }

 private:
  MappedFile(void* addr, size_t size) : addr_(addr), size_(size) {}
  void* addr_;
  size_t size_;
};

}  // namespace nextok::util
