#include "constraint/cfg/mask_memo.hpp"

#include <algorithm>
#include <cstring>

namespace nextok::constraint::cfg {

namespace {
constexpr uint64_t kSelf = uint64_t{1} << 31;  // names are below 2^31
constexpr size_t kNameOverhead = 64;           // a map node, roughly
}  // namespace

int32_t MaskMemo::name(const EarleyTables& t, const Chart& c, size_t k,
                       std::span<const int32_t> names) {
  if (names_budget_ == 0) return kNoName;
  std::lock_guard lock(mu_);
  items_.clear();
  for (const Item& it : c.set(k)) {
    // Completed items ran their completions when the set was closed; no
    // later step reads them.
    if (t.syms[it.pos] == EarleyTables::kEnd) continue;
    uint64_t origin = kSelf;
    if (it.origin != k) {
      if (names[it.origin] < 0) return kNoName;
      origin = static_cast<uint64_t>(names[it.origin]);
    }
    items_.push_back((uint64_t{it.pos} << 32) | origin);
  }
  set_key(items_, c.accepting[k] != 0, key_);
  if (auto it = names_.find(key_); it != names_.end()) return it->second;
  const size_t cost = key_.size() + kNameOverhead;
  if (names_used_ + cost > names_budget_ || names_.size() >= (size_t{1} << 30)) return kNoName;
  names_used_ += cost;
  const auto id = static_cast<int32_t>(names_.size());
  names_.emplace(key_, id);
  return id;
}

bool MaskMemo::find(int32_t name, std::span<uint32_t> out) {
  if (name < 0) return false;
  std::lock_guard lock(mu_);
  auto it = masks_.find(name);
  if (it == masks_.end() || it->second.mask.size() != out.size()) return false;
  std::memcpy(out.data(), it->second.mask.data(), out.size_bytes());
  lru_.splice(lru_.begin(), lru_, it->second.use);
  return true;
}

void MaskMemo::store(int32_t name, std::span<const uint32_t> mask) {
  if (name < 0) return;
  const size_t cost = mask.size_bytes() + kNameOverhead;
  std::lock_guard lock(mu_);
  if (masks_.count(name) || cost > masks_budget_) return;
  // The least recently used masks leave first.
  while (!lru_.empty() && masks_used_ + cost > masks_budget_) {
    const int32_t old = lru_.back();
    lru_.pop_back();
    masks_used_ -= masks_.at(old).mask.size() * sizeof(uint32_t) + kNameOverhead;
    masks_.erase(old);
  }
  masks_used_ += cost;
  lru_.push_front(name);
  masks_.emplace(name, Entry{std::vector<uint32_t>(mask.begin(), mask.end()), lru_.begin()});
}

}  // namespace nextok::constraint::cfg
