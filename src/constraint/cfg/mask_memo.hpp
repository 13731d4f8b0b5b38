// Masks of a grammar by parser state, shared by all its matchers. States
// are named by content (chart_names.hpp: an Earley set's items with each
// origin replaced by the name of its projection), so equal names have equal
// futures wherever and in whichever request they occur, and the mask of a
// state met again is a copy. Names and masks live in a byte budget; past
// it, new states are not named (and not memoised).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nextok::constraint::cfg {

class MaskMemo {
 public:
  static constexpr int32_t kNoName = -1;

  explicit MaskMemo(size_t budget_bytes)
      : names_budget_(budget_bytes / 4), masks_budget_(budget_bytes - budget_bytes / 4) {}

  // The number of a name's key (the same key, the same number), or kNoName
  // once the budget is spent.
  int32_t intern(const std::string& key);
  // The key of an interned name.
  std::string_view key(int32_t name);

  // Copies the memoised mask of `name` (from name(), or any other state
  // number of one automaton) into `out` and returns true, or returns false.
  bool find(int32_t name, std::span<uint32_t> out);
  void store(int32_t name, std::span<const uint32_t> mask);
  // False when the budget is 0 (memo off).
  bool enabled() const noexcept { return masks_budget_ > 0; }

 private:
  struct Entry {
    std::vector<uint32_t> mask;
    std::list<int32_t>::iterator use;
  };

  size_t names_budget_, masks_budget_;  // a quarter and the rest
  size_t names_used_ = 0, masks_used_ = 0;
  std::mutex mu_;
  std::unordered_map<std::string, int32_t> names_;
  std::vector<const std::string*> keys_;  // by name (map nodes do not move)
  std::unordered_map<int32_t, Entry> masks_;
  std::list<int32_t> lru_;  // front: most recently used
};

}  // namespace nextok::constraint::cfg
