// The insides of JsonGrammar, for the engines in this directory that run the
// JSON machine as one part of a larger output (structural tags).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "constraint/engine/leaf_cache.hpp"
#include "constraint/engine/machine.hpp"
#include "constraint/engine/token_index_impl.hpp"
#include "nextok/json_schema.hpp"

namespace nextok {

struct JsonGrammar::Impl {
  std::shared_ptr<const TokenIndex> index;
  constraint::Grammar grammar;
  std::unique_ptr<constraint::Machine> machine;
  mutable constraint::LeafCache cache{std::size_t{32} << 20};  // its own DFAs' entries
  mutable constraint::ConfigMaskCache configs;
  std::vector<std::string> warnings;
  size_t compile_bytes = 0;  // the compile budget's peak
};

}  // namespace nextok
