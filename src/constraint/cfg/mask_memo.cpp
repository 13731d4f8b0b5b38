#include "constraint/cfg/mask_memo.hpp"

#include <algorithm>
#include <cstring>

namespace nextok::constraint::cfg {

namespace {
constexpr size_t kNameOverhead = 64;  // a map node, roughly
}  // namespace

int32_t MaskMemo::intern(const std::string& key) {
  if (names_budget_ == 0) return kNoName;
  std::lock_guard lock(mu_);
  if (auto it = names_.find(key); it != names_.end()) return it->second;
  const size_t cost = key.size() + kNameOverhead;
  // Names stay below 2^29 (chart_names.hpp's local names start there).
  if (names_used_ + cost > names_budget_ || names_.size() >= (size_t{1} << 29)) return kNoName;
  names_used_ += cost;
  const auto id = static_cast<int32_t>(names_.size());
  keys_.push_back(&names_.emplace(key, id).first->first);
  return id;
}

std::string_view MaskMemo::key(int32_t name) {
  std::lock_guard lock(mu_);
  return *keys_[static_cast<size_t>(name)];
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
