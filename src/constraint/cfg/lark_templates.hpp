// Lark's templates (`name{a, b}: ...`) expanded into plain rules: every use
// name{x, y} becomes a rule of its own, the template's body with its
// parameters replaced by the arguments, made once per distinct argument
// list (recursion through the same arguments names the same rule).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "constraint/cfg/cfg_builder.hpp"
#include "constraint/cfg/lark_syntax.hpp"

namespace nextok::constraint::cfg::lark {

struct Template {
  std::vector<std::string> params;
  Expr body;
  size_t at = 0;
};
using Templates = std::map<std::string, Template, std::less<>>;

// Replaces every template use in d's definitions and ignores by its
// instance's name, adding the instances to d. Errors (a wrong argument
// count, a use of what is no template, over 1,000 instances or 16 KB of
// arguments to one) throw through `b` at the use's position.
void expand_templates(Definitions& d, const Templates& templates, const CfgBuilder& b);

}  // namespace nextok::constraint::cfg::lark
