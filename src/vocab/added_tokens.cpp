#include "vocab/added_tokens.hpp"

#include <algorithm>

#include "vocab/utf8.hpp"

namespace nextok::vocab {

void AddedTokenMatcher::add(std::string_view content, uint32_t id, Rules rules) {
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
    build_[node].rules = rules;
    if (rules.single_word && !word_) {
      word_ = std::make_shared<Regex>("[" + std::string(kRustWordChars) + "]");
    }
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
    nodes_[i].rules = build_[i].rules;
    for (auto [b, n] : ch) edges_.push_back({b, n});
  }
  build_.clear();
  build_.shrink_to_fit();
}

bool AddedTokenMatcher::find_raw(std::string_view text, size_t from, bool allow_special, Match& m,
                                 Rules& rules) const noexcept {
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
      if (hit.token != ~0u && (allow_special || !hit.rules.special)) {
        best = hit.token;
        best_end = j + 1;
        rules = hit.rules;
      }
    }
    if (best != ~0u) {
      m = {i, best_end, best};
      return true;
    }
  }
  return false;
}

namespace {

// Whether the code point that starts at text[i] is White_Space; sets its
// length.
bool white_space_at(std::string_view text, size_t i, size_t& len) {
  size_t k = i;
  const bool ws = is_white_space(utf8_next(text, k));
  len = k - i;
  return ws;
}

// The start of the code point that ends at text[at - 1].
size_t char_start_before(std::string_view text, size_t at) {
  size_t i = at - 1;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

}  // namespace

bool AddedTokenMatcher::word_char_at(std::string_view text, size_t at) const {
  size_t b = 0, e = 0;
  const std::string_view ch = text.substr(at, utf8_sequence_length(text, at));
  return word_->find(ch, 0, b, e);
}

bool AddedTokenMatcher::word_char_before(std::string_view text, size_t at) const {
  return word_char_at(text, char_start_before(text, at));
}

bool AddedTokenMatcher::find(std::string_view text, size_t from, bool allow_special,
                             Match& m) const {
  Rules rules;
  for (size_t search = from; find_raw(text, search, allow_special, m, rules);) {
    if (rules.single_word && ((m.begin > 0 && word_char_before(text, m.begin)) ||
                              (m.end < text.size() && word_char_at(text, m.end)))) {
      search = m.end;  // HF's iterator goes on after the discarded match
      continue;
    }
    if (rules.lstrip) {
      while (m.begin > from) {
        const size_t p = char_start_before(text, m.begin);
        size_t len = 0;
        if (!white_space_at(text, p, len)) break;
        m.begin = p;
      }
    }
    if (rules.rstrip) {
      size_t len = 0;
      while (m.end < text.size() && white_space_at(text, m.end, len)) m.end += len;
    }
    return true;
  }
  return false;
}

}  // namespace nextok::vocab
