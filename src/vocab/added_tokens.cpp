#include "vocab/added_tokens.hpp"

#include <algorithm>

namespace nextok::vocab {

void AddedTokenMatcher::add(std::string_view content, uint32_t id, bool special) {
  uint32_t node = 0;
  for (unsigned char c : content) {
    auto& ch = build_[node].children;
    auto it = std::find_if(ch.begin(), ch.end(), [c](const auto& e) { return e.first == c; });
    if (it != ch.end()) {
      node = it->second;
    } else {
      const auto next = static_cast<uint32_t>(build_.size());
      build_[node].children.emplace_back(c, next);
      build_.emplace_back();
      node = next;
    }
  }
  // The first definition of a content wins, as in HF's added vocabulary.
  if (build_[node].token == ~0u) {
    build_[node].token = id;
    build_[node].special = special;
  }
  if (!content.empty()) first_byte_[static_cast<unsigned char>(content[0])] = true;
}

void AddedTokenMatcher::finish() {
  nodes_.assign(build_.size(), Node{});
  edges_.clear();
  for (size_t i = 0; i < build_.size(); ++i) {
    auto ch = build_[i].children;
    std::sort(ch.begin(), ch.end());
    nodes_[i].first_child = static_cast<uint32_t>(edges_.size());
    nodes_[i].child_count = static_cast<uint32_t>(ch.size());
    nodes_[i].token = build_[i].token;
    nodes_[i].special = build_[i].special;
    for (auto [b, n] : ch) edges_.push_back({b, n});
  }
  build_.clear();
  build_.shrink_to_fit();
}

bool AddedTokenMatcher::find(std::string_view text, size_t from, bool allow_special,
                             Match& m) const noexcept {
  if (nodes_.size() <= 1) return false;
  for (size_t i = from; i < text.size(); ++i) {
    if (!first_byte_[static_cast<unsigned char>(text[i])]) continue;
    uint32_t node = 0;
    size_t best_end = 0;
    uint32_t best = ~0u;
    for (size_t j = i; j < text.size(); ++j) {
      const Node& n = nodes_[node];
      const Edge* lo = edges_.data() + n.first_child;
      const Edge* hi = lo + n.child_count;
      const auto c = static_cast<uint8_t>(text[j]);
      const Edge* e =
          std::lower_bound(lo, hi, c, [](const Edge& x, uint8_t b) { return x.byte < b; });
      if (e == hi || e->byte != c) break;
      node = e->node;
      const Node& hit = nodes_[node];
      if (hit.token != ~0u && (allow_special || !hit.special)) {
        best = hit.token;
        best_end = j + 1;
      }
    }
    if (best != ~0u) {
      m = {i, best_end, best};
      return true;
    }
  }
  return false;
}

}  // namespace nextok::vocab
