#include "grammar_flags.hpp"

#include "commands.hpp"
#include "nextok/error.hpp"

namespace nextok::tools {

void GrammarFlags::add_to(CLI::App& cmd) {
  cmd.add_option("--regex", regex, "Constrain the output to full-match a regex (ECMA-262)");
  cmd.add_option("--grammar", grammar_file,
                 "Constrain the output to a grammar file: Lark if it ends in .lark, else GBNF");
  cmd.add_option("--choice", choice,
                 "Constrain the output to one of these comma-separated strings");
  cmd.add_option("--structural-tag", structural_tag_file,
                 "Constrain the output to a structural tag (XGrammar's JSON) read from a file");
}

std::shared_ptr<const Grammar> GrammarFlags::compile(std::shared_ptr<const TokenIndex> index,
                                                     const ConstraintLimits& limits) const {
  const int n =
      !regex.empty() + !grammar_file.empty() + !choice.empty() + !structural_tag_file.empty();
  if (n > 1) {
    throw Error(ErrorCode::kInvalidArgument, "grammar",
                "give one of --regex, --grammar, --choice and --structural-tag");
  }
  if (!structural_tag_file.empty())
    return Grammar::structural_tag(std::move(index), read_file(structural_tag_file), limits);
  if (!regex.empty()) return Grammar::regex(std::move(index), regex, limits);
  if (!grammar_file.empty()) {
    const bool lark = grammar_file.size() > 5 && grammar_file.ends_with(".lark");
    return lark ? Grammar::lark(std::move(index), read_file(grammar_file), limits)
                : Grammar::gbnf(std::move(index), read_file(grammar_file), limits);
  }
  return Grammar::choice(std::move(index), split_commas(choice), limits);
}

}  // namespace nextok::tools
