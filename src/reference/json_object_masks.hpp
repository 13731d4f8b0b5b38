// Reference masks for "any RFC 8259 JSON object": a walk of the token trie
// with the byte automaton, independent of the schema engine. Tests compare
// JsonGrammar::any_object against it; it is not part of the library.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "constraint/trie/token_trie.hpp"
#include "nextok/vocab.hpp"
#include "reference/json_automaton.hpp"

namespace nextok::reference {

class JsonObjectMasks {
 public:
  JsonObjectMasks(std::shared_ptr<const Vocabulary> vocab,
                  std::shared_ptr<const constraint::TokenTrie> trie, JsonAutomatonOptions opt = {});

  // Writes bitmask_words(vocab.size()) words (the whole mask is rewritten).
  void step_mask(std::span<uint32_t> mask) const;
  // Throws Error{kInvalidArgument, "token"} when the token is not allowed.
  void advance(uint32_t token);
  bool is_complete() const noexcept { return grammar_.complete(history_.back()); }
  bool finished() const noexcept { return finished_; }
  // Undoes the last n advance() calls (speculative decoding).
  void rollback(size_t n);
  void reset();
  size_t steps() const noexcept { return history_.size() - 1; }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  std::shared_ptr<const constraint::TokenTrie> trie_;
  JsonAutomaton grammar_;
  std::vector<JsonAutomatonState> history_;  // state after each accepted token
  bool finished_ = false;                    // EOS was accepted
};

}  // namespace nextok::reference
