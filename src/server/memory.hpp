// Process memory for /health, and giving freed heap back to the system.
#pragma once
#include <cstddef>

namespace nextok::server {

struct MemoryUsage {
  std::size_t rss_bytes = 0;       // VmRSS
  std::size_t peak_rss_bytes = 0;  // VmHWM
};

// From /proc/self/status; zeros where it cannot be read.
MemoryUsage memory_usage();

// Returns free heap pages to the kernel (glibc malloc_trim). glibc keeps
// what large, short-lived allocations (a big schema's compile, a big body)
// freed in its arenas otherwise; a no-op elsewhere.
void release_free_memory();

// Caps glibc's malloc arenas (by default 8 per core, one per thread up to
// that). The server's many short-lived worker threads would otherwise each
// grow an arena to its own high-water mark and keep it. Call before threads
// start; a no-op elsewhere.
void limit_malloc_arenas(int arenas);

}  // namespace nextok::server
