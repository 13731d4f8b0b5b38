// What a TokenIndex holds: the vocabulary's token trie and the mask caches
// every grammar over it shares (JSON schemas and general grammars alike).
#pragma once

#include <algorithm>
#include <iterator>
#include <memory>

#include "constraint/engine/leaf_cache.hpp"
#include "constraint/schema/standard_dfas.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

struct TokenIndex::Impl {
  std::shared_ptr<const Vocabulary> vocab;
  constraint::TokenTrie trie;
  mutable constraint::LeafCache standard_cache{1 << 16};
  const constraint::Dfa* standard_dfas[constraint::StandardDfas::kCount];

  explicit Impl(std::shared_ptr<const Vocabulary> v) : vocab(std::move(v)), trie(*vocab) {
    const auto& sd = constraint::StandardDfas::get();
    const constraint::Dfa* all[] = {sd.string.get(),         sd.number.get(), sd.integer.get(),
                                    sd.true_.get(),          sd.false_.get(), sd.null_.get(),
                                    sd.integer_strict.get(), sd.key.get()};
    std::copy(std::begin(all), std::end(all), standard_dfas);
  }
};

}  // namespace nextok
