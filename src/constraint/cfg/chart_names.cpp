#include "constraint/cfg/chart_names.hpp"

#include <algorithm>
#include <atomic>

#include "constraint/cfg/mask_memo.hpp"

namespace nextok::constraint::cfg {

void Projector::project(const EarleyTables& t, std::span<const uint64_t> items, uint32_t a,
                        std::vector<uint64_t>& out) {
  out.clear();
  const size_t nts = t.nullable.size();
  if (head_stamp_.size() < nts) {
    head_stamp_.resize(nts, 0);
    reached_stamp_.resize(nts, 0);
    head_.resize(nts);
  }
  if (++gen_ == 0) {  // wrapped: no stamp may read as current
    std::fill(head_stamp_.begin(), head_stamp_.end(), 0);
    std::fill(reached_stamp_.begin(), reached_stamp_.end(), 0);
    gen_ = 1;
  }
  todo_.assign(1, a);
  reached_stamp_[a] = gen_;
  const auto reach = [&](uint64_t it) {
    const uint32_t lhs = t.lhs[static_cast<uint32_t>(it >> 32)];
    if ((it & 0xFFFFFFFFu) == kSelfOrigin && reached_stamp_[lhs] != gen_) {
      reached_stamp_[lhs] = gen_;
      todo_.push_back(lhs);
    }
  };
  // Most projections stop at `a`: one scan, its items already in order.
  for (const uint64_t it : items) {
    if (t.syms[static_cast<uint32_t>(it >> 32)] == static_cast<Symbol>(a)) {
      out.push_back(it);
      reach(it);
    }
  }
  if (todo_.size() == 1) return;
  // A short closure is a few more scans; a long one (a JSON value's set
  // closes over most of the grammar) reads lists of the items that began
  // in the set, the only ones that reach further, linked by the
  // nonterminal they wait for.
  size_t done = 1;
  for (; done < todo_.size() && done < kScans; ++done) {
    const auto n = static_cast<Symbol>(todo_[done]);
    for (const uint64_t it : items) {
      if (t.syms[static_cast<uint32_t>(it >> 32)] != n) continue;
      out.push_back(it);
      reach(it);
    }
  }
  if (done == todo_.size()) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return;
  }
  if (next_.size() < items.size()) next_.resize(items.size());
  for (size_t i = items.size(); i-- > 0;) {
    if ((items[i] & 0xFFFFFFFFu) != kSelfOrigin) continue;
    const Symbol sym = t.syms[static_cast<uint32_t>(items[i] >> 32)];
    if (sym < 0) continue;  // a terminal or a production's end
    const auto n = static_cast<size_t>(sym);
    if (head_stamp_[n] != gen_) {
      head_stamp_[n] = gen_;
      head_[n] = -1;
    }
    next_[i] = head_[n];
    head_[n] = static_cast<int32_t>(i);
  }
  for (; done < todo_.size(); ++done) {
    const uint32_t n = todo_[done];
    if (head_stamp_[n] != gen_) continue;
    for (int32_t i = head_[n]; i >= 0; i = next_[static_cast<size_t>(i)]) {
      reach(items[static_cast<size_t>(i)]);
    }
  }
  // The projection is every item waiting for a nonterminal reached, in
  // the items' order (sorted, and as free of duplicates as `items`).
  out.clear();
  for (const uint64_t it : items) {
    const Symbol sym = t.syms[static_cast<uint32_t>(it >> 32)];
    if (sym >= 0 && reached_stamp_[static_cast<size_t>(sym)] == gen_) out.push_back(it);
  }
}

ChartNames::Serial::Serial() {
  static std::atomic<uint64_t> next{1};
  value = next.fetch_add(1, std::memory_order_relaxed);
}

void ChartNames::truncate(size_t n) {
  if (n < sets_.size()) sets_.resize(n);
}

void ChartNames::name_sets(const EarleyTables& t, const Chart& c, MaskMemo& memo) {
  memo_ = &memo;
  for (size_t k = sets_.size(); k < c.sets(); ++k) {
    sets_.emplace_back();
    sets_.back().name = name_set(t, c, k);
  }
}

namespace {
// The key of a projection's items (sorted, deduplicated), into `key`.
const std::string& projection_key(const std::vector<uint64_t>& items, std::string& key) {
  key.assign(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(uint64_t));
  key.push_back(2);  // a projection, never equal to a set's key (0 or 1)
  return key;
}

// Whether named items hold a matcher's own name (kLocalNames and up).
bool holds_local_name(const std::vector<uint64_t>& items) {
  return std::any_of(items.begin(), items.end(), [](uint64_t it) {
    const uint64_t code = it & 0xFFFFFFFFu;
    return code >= static_cast<uint64_t>(kLocalNames) && code != kSelfOrigin;
  });
}
}  // namespace

int32_t ChartNames::intern(const std::string& key, bool local) {
  // A key that holds a matcher's own name means nothing to other matchers.
  const int32_t name = local ? kNoName : memo_->intern(key);
  if (name >= 0) return name;
  const auto [it, fresh] =
      local_ids_.try_emplace(key, kLocalNames + static_cast<int32_t>(local_keys_.size()));
  if (fresh) local_keys_.push_back(key);
  return it->second;
}

std::string_view ChartNames::key(int32_t name) const {
  if (name >= kLocalNames) return local_keys_[static_cast<size_t>(name - kLocalNames)];
  return memo_->key(name);
}

int32_t ChartNames::name_set(const EarleyTables& t, const Chart& c, size_t k) {
  auto& items = sets_[k].items;
  items.clear();
  for (const Item& it : c.set(k)) {
    // Completed items ran their completions when the set was closed; no
    // later step reads them.
    if (t.syms[it.pos] == EarleyTables::kEnd) continue;
    uint64_t origin = kSelfOrigin;
    if (it.origin != k) {
      origin = static_cast<uint64_t>(projection(t, it.origin, t.lhs[it.pos]));
    }
    items.push_back((uint64_t{it.pos} << 32) | origin);
  }
  set_key(items, c.accepting[k] != 0, key_);  // sorts and deduplicates items
  return intern(key_, holds_local_name(items));
}

int32_t ChartNames::projection(const EarleyTables& t, size_t k, uint32_t a) {
  Set& s = sets_[k];
  for (const auto& [x, name] : s.projs) {
    if (x == a) return name;
  }
  projector_.project(t, s.items, a, scratch_);
  const int32_t name = intern(projection_key(scratch_, key_), holds_local_name(scratch_));
  s.projs.emplace_back(a, name);
  return name;
}

}  // namespace nextok::constraint::cfg
