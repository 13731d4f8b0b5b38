#include "memory.hpp"

#include <fstream>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nextok::server {

MemoryUsage memory_usage() {
  MemoryUsage m;
  std::ifstream in("/proc/self/status");
  std::string line;
  auto kib = [](const std::string& l) {
    return static_cast<std::size_t>(std::stoull(l.substr(l.find(':') + 1))) * 1024;
  };
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) m.rss_bytes = kib(line);
    if (line.rfind("VmHWM:", 0) == 0) m.peak_rss_bytes = kib(line);
  }
  return m;
}

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void set_server_heap_policy([[maybe_unused]] int arenas) {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, arenas);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

}  // namespace nextok::server
