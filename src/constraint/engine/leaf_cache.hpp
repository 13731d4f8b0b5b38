// Per-lexeme-state token masks. Inside a string, number or key, whether a
// token stays inside the lexeme depends only on the lexeme DFA's state, so
// that part of the mask is computed once per (DFA, state) and reused by every
// step, request and schema that reaches the state. Tokens that end the lexeme
// are listed as exits: the matcher checks just those against the grammar.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "constraint/regex/dfa.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

struct LengthBounds;  // machine.hpp

struct LeafExit {
  uint32_t node;   // trie node
  int32_t q;       // DFA state where the lexeme ends
  uint32_t chars;  // code points read from the start state up to the end
  bool before;     // the lexeme ended before node's byte (else at it)
};

struct LeafEntry {
  std::vector<uint32_t> inside;  // tokens read wholly inside the lexeme
  std::vector<LeafExit> exits;
  // Counting entries, so a string near its maxLength can keep only the
  // tokens that fit: the inside tokens needing k < kShortChars code points
  // (short[k]: what they add plus the fewest still needed after them), and
  // the others with that number.
  static constexpr uint32_t kShortChars = 8;
  std::vector<std::vector<uint32_t>> short_inside;
  std::vector<std::pair<uint32_t, uint32_t>> long_inside;
};

// Which leaf state an entry describes; `counting` entries track code points.
struct LeafKey {
  const Dfa* dfa;
  int32_t q;
  uint8_t esc;
  bool counting;
  bool operator==(const LeafKey&) const = default;
};

struct LeafKeyHash {
  size_t operator()(const LeafKey& k) const noexcept {
    return std::hash<const void*>()(k.dfa) ^ (static_cast<size_t>(k.q) * 0x9E3779B97F4A7C15ull) ^
           (static_cast<size_t>(k.esc) << 1) ^ static_cast<size_t>(k.counting);
  }
};

// Thread-safe and bounded by bytes: an entry of a broad string state lists
// most of the vocabulary (~0.5 MB for Llama-3.1), so a count bound let a
// stream of distinct patterns hold gigabytes. An entry that would pass the
// bound starts the cache afresh (entries in use live on in their holders):
// a flood costs recomputation, never memory, and the cache warms again.
class LeafCache {
 public:
  explicit LeafCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  // `lengths` (counting entries) ranks inside tokens by the code points
  // they add plus the fewest the string then still needs.
  std::shared_ptr<const LeafEntry> get(const TokenTrie& trie, const LeafKey& key,
                                       const LengthBounds* lengths = nullptr);
  // Made now and kept through restarts, outside the bound (the standard
  // string and key states every schema reaches).
  void pin(const TokenTrie& trie, const LeafKey& key);
  size_t bytes() const;
  size_t restarts() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<LeafKey, std::shared_ptr<const LeafEntry>, LeafKeyHash> map_, pinned_;
  size_t bytes_ = 0, restarts_ = 0, max_bytes_;
};

// What an entry holds (its lists and its place in the map).
size_t leaf_entry_bytes(const LeafEntry& e);

// Whole masks by exact machine configuration, for the steps that the leaf
// entries do not cover (between lexemes): a schema used again, or
// instances of the same shape, find them here. Bounded by bytes.
class ConfigMaskCache {
 public:
  explicit ConfigMaskCache(size_t max_bytes = 32u << 20) : max_bytes_(max_bytes) {}
  std::shared_ptr<const std::vector<uint32_t>> find(const std::string& key);
  void put(const std::string& key, std::vector<uint32_t> mask);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<uint32_t>>> map_;
  size_t bytes_ = 0, max_bytes_;
};

// The entry for one state, by walking the trie with the DFA alone.
std::shared_ptr<const LeafEntry> build_leaf_entry(const TokenTrie& trie, const LeafKey& key,
                                                  const LengthBounds* lengths);

}  // namespace nextok::constraint
