// A small persistent thread pool for batch calls made with the GIL released
// (fill_next_token_bitmasks). Workers never touch Python objects.
#pragma once

#include <cstddef>
#include <functional>

namespace nextok::py {

// Runs fn(i) for every i in [0, n) on at most `threads` threads, the
// calling thread included, and returns when all are done. The first
// exception thrown by fn is rethrown here (the other items still run).
// Concurrent callers do not wait for each other: one that finds the pool
// busy runs its items on its own thread.
void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn);

// std::thread::hardware_concurrency() (read once), at least 1.
std::size_t hardware_threads() noexcept;

}  // namespace nextok::py
