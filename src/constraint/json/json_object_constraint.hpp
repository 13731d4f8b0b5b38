// response_format json_object: any RFC 8259 JSON object, as token masks.
// The mask is a walk of the shared token trie with the JSON automaton from
// the current state; EOS ids are allowed exactly when the object is
// complete, and other special tokens never.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "constraint/json/json_grammar.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/vocab.hpp"

namespace nextok::constraint {

class JsonObjectConstraint {
 public:
  JsonObjectConstraint(std::shared_ptr<const Vocabulary> vocab,
                       std::shared_ptr<const TokenTrie> trie, JsonOptions opt = {});

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
  std::shared_ptr<const TokenTrie> trie_;
  JsonGrammar grammar_;
  std::vector<JsonState> history_;  // state after each accepted token
  bool finished_ = false;           // EOS was accepted
};

}  // namespace nextok::constraint
