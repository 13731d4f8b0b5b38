#include "util/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nextok/error.hpp"

namespace nextok::util {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path,
                                                   const std::string& what,
                                                   const std::string& param) {
  const std::string name = path.string();
  auto fail = [&](const std::string& verb, int e) {
    throw Error(ErrorCode::kIo, param,
                "cannot " + verb + " " + what + " " + name + ": " + std::strerror(e));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail("stat", e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorCode::kIo, param, "cannot read " + what + " " + name + ": not a regular file");
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  }
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int e = errno;
  ::close(fd);
  if (addr == MAP_FAILED) fail("map", e);
  return std::shared_ptr<const MappedFile>(new MappedFile(addr, size));
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

}  // namespace nextok::util
