// Shared declarations of the nextok._nextok extension: the bound C++ types
// and one registration function per concept (one source file each).
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <memory>
#include <mutex>

#include "nextok/json_schema.hpp"
#include "nextok/vocab.hpp"

namespace nextok::py {

namespace nb = nanobind;

// A vocabulary plus the logits width it is used with (>= vocab->size();
// the ids past the tokenizer are absent and never allowed). The token index
// is built on first use and then shared by every grammar.
struct TokenizerInfo {
  std::shared_ptr<const Vocabulary> vocab;
  std::size_t vocab_size = 0;

  std::shared_ptr<const TokenIndex> index() const;

 private:
  mutable std::once_flag index_once_;
  mutable std::shared_ptr<const TokenIndex> index_;
};

// One compiled grammar; immutable, so any number of threads share it.
struct Grammar {
  std::shared_ptr<const JsonGrammar> grammar;
  std::shared_ptr<const TokenizerInfo> info;
};

// One sequence's position in a grammar. One thread at a time.
struct Matcher {
  explicit Matcher(const Grammar& g) : constraint(g.grammar), info(g.info) {}
  Matcher(const Matcher& other) = default;
  JsonConstraint constraint;
  std::shared_ptr<const TokenizerInfo> info;
  std::size_t words() const noexcept { return (info->vocab_size + 31) / 32; }
};

void bind_errors(nb::module_& m);
void bind_vocab(nb::module_& m);
void bind_matcher(nb::module_& m);
void bind_batch(nb::module_& m);
void bind_sampler(nb::module_& m);
void bind_timing(nb::module_& m);

}  // namespace nextok::py
