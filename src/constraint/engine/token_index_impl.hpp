// What a TokenIndex holds: the vocabulary's token trie and the mask caches
// every grammar over it shares (JSON schemas and general grammars alike).
#pragma once

#include <algorithm>
#include <iterator>
#include <memory>

#include "constraint/engine/leaf_cache.hpp"
#include "constraint/schema/standard_dfas.hpp"
#include "constraint/trie/free_text_masks.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

struct TokenIndex::Impl {
  std::shared_ptr<const Vocabulary> vocab;
  constraint::TokenTrie trie;
  // Shared by every grammar over the vocabulary, and so by every request
  // of a server: bounded by bytes (leaf_cache.hpp).
  mutable constraint::LeafCache standard_cache{std::size_t{128} << 20};
  const constraint::Dfa* standard_dfas[constraint::StandardDfas::kCount];

  explicit Impl(std::shared_ptr<const Vocabulary> v) : vocab(std::move(v)), trie(*vocab) {
    const auto& sd = constraint::StandardDfas::get();
    const constraint::Dfa* all[] = {sd.string.get(),         sd.number.get(), sd.integer.get(),
                                    sd.true_.get(),          sd.false_.get(), sd.null_.get(),
                                    sd.integer_strict.get(), sd.key.get()};
    std::copy(std::begin(all), std::end(all), standard_dfas);
    warm_string_entries(*sd.string);
    warm_string_entries(*sd.key);
    // What lies below each trie node, for the grammar walker's free-text
    // skips: once per vocabulary (a shared table of the distinct sets, 4
    // bytes a node) rather than in the first grammar's compile.
    (void)trie.bytes_below();
    // And the token lists that make a free-text state's kept mask a copy
    // (free_text_masks.hpp), rather than a walk in a request's mask.
    trie.free_text_masks().prepare(trie);
  }

  // Inside a string nearly every token stays inside, so a first-time entry
  // walks the whole trie (milliseconds at 128k tokens). Every schema reaches
  // the standard string and key states, so their entries are made here,
  // once per vocabulary, instead of inside some request's first mask.
  void warm_string_entries(const constraint::Dfa& d) {
    for (size_t q = 0; q < d.states(); ++q)
      standard_cache.pin(trie, {&d, static_cast<int32_t>(q), 0, false});
  }
};

}  // namespace nextok
