// --regex / --grammar / --choice / --structural-tag: the grammar constraint flags shared by
// `nextok generate` and `nextok grammar-generate`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "nextok/grammar.hpp"

namespace nextok::tools {

struct GrammarFlags {
  std::string regex;
  std::string grammar_file;  // GBNF
  std::string choice;        // comma-separated
  std::string structural_tag_file;

  void add_to(CLI::App& cmd);
  bool given() const {
    return !regex.empty() || !grammar_file.empty() || !choice.empty() ||
           !structural_tag_file.empty();
  }
  // Throws Error{kInvalidArgument} when more than one is given.
  std::shared_ptr<const Grammar> compile(std::shared_ptr<const TokenIndex> index,
                                         const ConstraintLimits& limits = {}) const;
};

}  // namespace nextok::tools
