#include "constraint/schema/dfa_interner.hpp"

#include <mutex>
#include <unordered_map>

namespace nextok::constraint {

namespace {

// Interned DFAs live as long as the process, so their number, each one's
// table and all of them together are bounded: a stream of distinct large
// patterns (or compiles that fail after building some) must not keep
// gigabytes. Such a DFA belongs to its grammar alone. Real schemas' shared
// automata (formats, number ranges, short patterns) are far smaller.
constexpr size_t kMaxInterned = 4096;
constexpr size_t kMaxInternedDfaBytes = size_t{1} << 20;
constexpr size_t kMaxInternedBytes = size_t{64} << 20;

struct Interner {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const Dfa>> map;
  std::unordered_multimap<uint64_t, std::shared_ptr<const Dfa>> by_content;
  size_t bytes = 0;  // of the distinct DFAs held
  size_t size() const { return map.size() + by_content.size(); }
  bool full(const Dfa& d) const {
    const size_t b = d.memory_bytes();
    return size() >= kMaxInterned || b > kMaxInternedDfaBytes || bytes + b > kMaxInternedBytes;
  }

  // With mu held.
  std::shared_ptr<const Dfa> find_equal(const Dfa& d, uint64_t fp) const {
    auto [b, e] = by_content.equal_range(fp);
    for (auto it = b; it != e; ++it)
      if (*it->second == d) return it->second;
    return nullptr;
  }
};

Interner& interner() {
  static Interner* i = new Interner();  // never destroyed: caches hold raw pointers
  return *i;
}

}  // namespace

InternedDfa intern_dfa(const std::string& key, const std::function<Dfa()>& build) {
  Interner& in = interner();
  {
    std::lock_guard lock(in.mu);
    if (auto it = in.map.find(key); it != in.map.end()) return {it->second, true};
  }
  auto d = std::make_shared<const Dfa>(build());  // may throw; nothing is stored then
  const uint64_t fp = d->fingerprint();
  std::lock_guard lock(in.mu);
  if (auto same = in.find_equal(*d, fp)) {
    if (in.size() < kMaxInterned) in.map.emplace(key, same);
    return {std::move(same), true};
  }
  if (in.full(*d)) return {std::move(d), false};
  auto [it, fresh] = in.map.emplace(key, d);
  if (fresh) {
    in.by_content.emplace(fp, d);
    in.bytes += d->memory_bytes();
  }
  return {it->second, true};
}

InternedDfa intern_dfa(std::shared_ptr<const Dfa> d) {
  Interner& in = interner();
  const uint64_t fp = d->fingerprint();
  std::lock_guard lock(in.mu);
  if (auto same = in.find_equal(*d, fp)) return {same, true};
  if (in.full(*d)) return {std::move(d), false};
  in.by_content.emplace(fp, d);
  in.bytes += d->memory_bytes();
  return {std::move(d), true};
}

}  // namespace nextok::constraint
