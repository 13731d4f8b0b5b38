// Test and profiling hooks of the pipeline kernel: per-path row counters
// and stage timestamps (off unless a test asks).
#pragma once

#include "backend/cuda/launch.hpp"

namespace nextok::cuda::dev {

using detail::kPathCounters;
using detail::kPathFast;
using detail::kPathKfirstFast;
using detail::kPathKfirstRadix;
using detail::kPathKfirstWarpTail;
using detail::kPathRadix;
using detail::kPathStream;
using detail::kPathStreamDeferred;
using detail::kPathStreamMass;
using detail::kPathStreamMassReread;
using detail::kPathStreamModified;
using detail::kPathStreamRescan;
using detail::kPathStreamWarpTail;
using detail::kPathWarpTail;

// Test hook: sampled rows per path (one atomic per row, by rank 0's thread
// 0), indexed by PathCounter.
__device__ unsigned long long g_pipeline_paths[kPathCounters];

// Profiling hook: clock64() of block rank 0 of row 0 at stage boundaries,
// [15] = globaltimer ns from start to end.
__device__ long long g_pipeline_stamps[16];
__device__ __forceinline__ void stamp_at(bool on, int i) {
  if (on && blockIdx.x == 0 && threadIdx.x == 0) g_pipeline_stamps[i] = clock64();
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Profiling hook: globaltimer ns of every block of row 0 (up to 16) at
// entry, after stages 1, 3 and 6, and before the max exchange: launch skew and barrier waits.
__device__ unsigned long long g_block_ns[16][5];
__device__ __forceinline__ void block_stamp(bool on, int i) {
  if (on && blockIdx.x < 16 && threadIdx.x == 0) g_block_ns[blockIdx.x][i] = global_ns();
}

}  // namespace nextok::cuda::dev
