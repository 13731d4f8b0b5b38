// Computes a token mask for a set of machine configurations by walking the
// token trie. Inside a lexeme (one configuration whose top frame is a leaf
// or key) the walk steps the lexeme DFA alone, a table lookup per byte; the
// machine runs only where a lexeme ends. At the walk's root, a cached
// per-state entry (leaf_cache.hpp) replaces the inside part entirely.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "constraint/engine/leaf_cache.hpp"
#include "constraint/engine/machine.hpp"
#include "constraint/trie/token_trie.hpp"

namespace nextok::constraint {

struct MaskCaches {
  LeafCache* standard;              // shared by every grammar (standard DFAs)
  LeafCache* grammar;               // this grammar's own DFAs
  const Dfa* const* standard_dfas;  // StandardDfas::kCount of them
};

class MaskWalker {
 public:
  MaskWalker(const TokenTrie& trie, const Machine& m, MaskCaches caches);

  // ORs the allowed tokens (EOS excluded) into mask.
  void allow(const ConfigSet& state, std::span<uint32_t> mask);

 private:
  struct Level {
    ConfigSet set;
    bool lane = false;  // one configuration reading a lexeme: see base
    uint32_t base_depth = 0;
    Frame top;                // lane: the lexeme frame as of this depth
    std::vector<Frame> base;  // at a lane's first depth: its configuration
  };

  bool child(size_t d, uint8_t b);
  void enter_lane(size_t d);
  void materialize(const Level& lane, std::vector<Frame>& out) const;
  void walk_below(uint32_t node, std::span<uint32_t> mask);
  void allow_tokens(uint32_t node, std::span<uint32_t> mask) const;
  bool cached(std::span<uint32_t> mask);

  const TokenTrie& trie_;
  const Machine& m_;
  MaskCaches caches_;
  std::vector<Level> levels_;
  std::vector<Frame> scratch_;
};

}  // namespace nextok::constraint
