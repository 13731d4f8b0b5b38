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

// glibc's heap policy for a long-running server; call before threads start
// (a no-op elsewhere):
// - caps the malloc arenas (by default 8 per core, one per thread up to
//   that): the many short-lived worker threads would otherwise each grow an
//   arena to its own high-water mark and keep it;
// - fixes the mmap and trim thresholds at 1 MiB. glibc raises both after a
//   big block is freed (up to 32 and 64 MiB), and malloc_trim never shrinks
//   the top of a thread's arena: after a burst of big compiles, 9-18 MiB
//   stayed resident in about one run of ten. Fixed thresholds send big
//   tables to mmap (returned on free) and trim arena tops past 1 MiB.
void set_server_heap_policy(int arenas);

}  // namespace nextok::server
