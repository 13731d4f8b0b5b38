#include "constraint/trie/token_trie.hpp"

#include "constraint/trie/free_text_masks.hpp"

#include <algorithm>
#include <numeric>

#include "nextok/error.hpp"

namespace nextok::constraint {

TokenTrie::TokenTrie(const Vocabulary& vocab)
    : vocab_size_(vocab.size()), free_text_(std::make_shared<FreeTextMasks>()) {
  // Sort the ids by their bytes: the depth-first order of the trie is then
  // one pass with a stack of open nodes.
  // Sort keys carry the first 8 bytes big-endian, so most comparisons never
  // touch the token bytes (table building is bound by cache misses).
  struct Key {
    uint64_t prefix;
    uint32_t id;
  };
  std::vector<Key> keys;
  keys.reserve(vocab.size());
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view b = vocab.bytes(id);
    // EOS ids end the output whatever their bytes: the engines add them apart.
    if (vocab.is_special(id) || vocab.is_eos(id) || b.empty()) continue;
    uint64_t prefix = 0;
    for (size_t k = 0; k < 8; ++k) {
      prefix = (prefix << 8) | (k < b.size() ? static_cast<uint8_t>(b[k]) : 0u);
    }
    keys.push_back({prefix, id});
  }
  std::sort(keys.begin(), keys.end(), [&](const Key& x, const Key& y) {
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    const auto bx = vocab.bytes(x.id), by = vocab.bytes(y.id);
    return bx != by ? bx < by : x.id < y.id;
  });
  std::vector<uint32_t> ids(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) ids[k] = keys[k].id;
  for (uint32_t id : ids) max_depth_ = std::max(max_depth_, vocab.bytes(id).size());
  if (max_depth_ > 255) {
    throw Error(ErrorCode::kUnsupported, "vocab",
                "a token of " + std::to_string(max_depth_) +
                    " bytes is longer than the token trie's 255-byte limit");
  }
  nodes_.push_back({0, 0, 0, 0, 0});
  tokens_.reserve(ids.size());
  std::vector<uint32_t> open = {0};  // node index per depth on the current path
  std::string_view path;             // bytes of the current path
  for (uint32_t id : ids) {
    const std::string_view b = vocab.bytes(id);
    // Close the nodes that are not a prefix of b.
    size_t common = 0;
    while (common < path.size() && common < b.size() && path[common] == b[common]) ++common;
    while (open.size() > common + 1) {
      nodes_[open.back()].end = static_cast<uint32_t>(nodes_.size());
      open.pop_back();
    }
    for (size_t d = common; d < b.size(); ++d) {
      open.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back({0, static_cast<uint32_t>(tokens_.size()), 0, static_cast<uint8_t>(b[d]),
                        static_cast<uint8_t>(d + 1)});
    }
    Node& leaf = nodes_[open.back()];
    if (leaf.token_count == 0) leaf.first_token = static_cast<uint32_t>(tokens_.size());
    tokens_.push_back(id);
    ++leaf.token_count;
    path = b;
  }
  while (!open.empty()) {
    nodes_[open.back()].end = static_cast<uint32_t>(nodes_.size());
    open.pop_back();
  }
}

TokenTrie::BelowBytes TokenTrie::bytes_below() const {
  std::call_once(below_->once, [&] { make_below(); });
  return {below_->index.data(), below_->bytes.data(), below_->index.size()};
}

TokenTrie::BelowUtf8 TokenTrie::utf8_below() const {
  std::call_once(below_->once, [&] { make_below(); });
  return {below_->index.data(), below_->utf8.data()};
}

void TokenTrie::make_below() const {
  std::vector<Bytes> below(nodes_.size());
  std::vector<uint8_t> utf8(nodes_.size());
  // Backward over the depth-first order, every node comes after its
  // descendants and before its earlier siblings: acc[d] gathers the
  // depth-d children of the node about to be met at depth d - 1 (bytes
  // by OR, UTF-8 reader states that stay well-formed by AND).
  std::vector<Bytes> acc(max_depth_ + 2, Bytes{});
  std::vector<uint8_t> ok(max_depth_ + 2, 0xFF);
  for (size_t i = nodes_.size(); i-- > 0;) {
    const size_t d = nodes_[i].depth;
    below[i] = acc[d + 1];
    utf8[i] = ok[d + 1];
    acc[d + 1] = Bytes{};
    ok[d + 1] = 0xFF;
    if (i == 0) break;
    const uint8_t b = nodes_[i].byte;
    Bytes& up = acc[d];
    for (size_t w = 0; w < 4; ++w) up[w] |= below[i][w];
    up[b >> 6] |= uint64_t{1} << (b & 63);
    uint8_t states = 0;  // the states of the parent's reader this edge keeps well-formed
    for (int s = 0; s < Utf8Reader::kStates; ++s) {
      const int n = Utf8Reader::next(s, b);
      if (n >= 0 && ((utf8[i] >> n) & 1)) states |= static_cast<uint8_t>(1u << s);
    }
    ok[d] &= states;
  }
  // The distinct (bytes, UTF-8) pairs, by an open-addressed table.
  Below& out = *below_;
  out.index.resize(nodes_.size());
  int bits = 1;
  while ((size_t{1} << bits) < nodes_.size()) ++bits;
  const size_t slots = size_t{1} << bits;
  std::vector<uint32_t> table(slots, UINT32_MAX);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    uint64_t h = utf8[i];
    for (const uint64_t w : below[i]) h = (h ^ w ^ (h >> 29)) * 0x9E3779B97F4A7C15ull;
    size_t at = static_cast<size_t>(h >> (64 - bits));  // the best-mixed bits
    while (table[at] != UINT32_MAX &&
           (out.bytes[table[at]] != below[i] || out.utf8[table[at]] != utf8[i])) {
      at = (at + 1) & (slots - 1);
    }
    if (table[at] == UINT32_MAX) {
      table[at] = static_cast<uint32_t>(out.bytes.size());
      out.bytes.push_back(below[i]);
      out.utf8.push_back(utf8[i]);
    }
    out.index[i] = table[at];
  }
  out.bytes.shrink_to_fit();
  out.utf8.shrink_to_fit();
}

}  // namespace nextok::constraint
