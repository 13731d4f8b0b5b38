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
  ConfigMaskCache* configs;         // this grammar's whole masks by configuration
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
    bool lane = false;        // every configuration reads a lexeme: see base
    uint32_t base_depth = 0;  // the lane's first depth
    std::vector<Frame> tops;  // lane: each configuration's lexeme frame (q < 0: dead)
    ConfigSet base;           // at a lane's first depth: its configurations
  };

  void compute(const ConfigSet& state, std::span<uint32_t> mask);
  bool child(size_t d, uint8_t b);
  void enter_lane(size_t d);
  void materialize(const Level& lane, size_t k, std::vector<Frame>& out) const;
  void walk_below(uint32_t node, std::span<uint32_t> mask);
  void allow_tokens(uint32_t node, std::span<uint32_t> mask) const;
  void cached(std::span<uint32_t> mask);
  bool cached_one(size_t k, std::span<uint32_t> mask);
  void declared_exits(const Dfa& d, uint32_t obj, uint32_t node, int32_t q);

  const TokenTrie& trie_;
  const Machine& m_;
  MaskCaches caches_;
  std::vector<Level> levels_;
  std::vector<Frame> scratch_;
  std::vector<std::pair<uint32_t, int32_t>> overrides_;  // trie node → key final state
  struct ExitMemo {
    int32_t q;
    uint32_t n;
    int byte;  // the byte read after the lexeme, or -1
    ConfigSet set;
  };
  std::vector<ExitMemo> memo_;
  std::string key_;
  std::vector<uint32_t> fresh_;
  ConfigSet rest_;  // the lane configurations no cached entry covers
};

}  // namespace nextok::constraint
