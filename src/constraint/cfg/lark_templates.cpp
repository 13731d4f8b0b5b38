#include "constraint/cfg/lark_templates.hpp"

namespace nextok::constraint::cfg::lark {

namespace {

constexpr size_t kMaxInstances = 1000, kMaxInstanceKey = size_t{1} << 14;

// An expression's content as a key (its position left out).
void serialize(const Expr& e, std::string& out) {
  out += static_cast<char>('0' + static_cast<int>(e.kind));
  out += e.icase ? 'i' : '-';
  out += e.dotall ? 's' : '-';
  out += std::to_string(e.text.size()) + ":" + e.text;
  out += std::to_string(e.lo) + "," + std::to_string(e.hi) + "," + std::to_string(e.min) + "," +
         std::to_string(e.max) + "(";
  for (const Expr& k : e.kids) serialize(k, out);
  out += ")";
}

Expr substitute(const Expr& e, const std::vector<std::string>& params,
                const std::vector<Expr>& args) {
  if (e.kind == Expr::Kind::kName && e.kids.empty()) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i] == e.text) return args[i];
    }
  }
  Expr out = e;
  for (Expr& k : out.kids) k = substitute(k, params, args);
  return out;
}

class Expander {
 public:
  Expander(Definitions& d, const Templates& templates, const CfgBuilder& b)
      : d_(d), templates_(templates), b_(b) {}

  void run() {
    std::vector<std::string> names;
    for (const auto& [n, def] : d_.defs) names.push_back(n);
    for (const auto& n : names) expand(d_.defs.at(n).body);
    for (Expr& e : d_.ignores) expand(e);
    // Instances' bodies from a list, not by recursion: a chain of instances
    // (t{x}: t{w{x}}) stays off the stack.
    while (!pending_.empty()) {
      const std::string key = std::move(pending_.back());
      pending_.pop_back();
      expand(d_.defs.at(key).body);
    }
  }

 private:
  void expand(Expr& e) {
    for (Expr& k : e.kids) expand(k);
    if (e.kind != Expr::Kind::kName || e.kids.empty()) return;
    const auto t = templates_.find(e.text);
    if (t == templates_.end()) b_.fail(e.at, "'" + e.text + "' is not a template");
    const Template& tpl = t->second;
    if (tpl.params.size() != e.kids.size()) {
      b_.fail(e.at, "the template '" + e.text + "' takes " + std::to_string(tpl.params.size()) +
                        " argument" + (tpl.params.size() == 1 ? "" : "s"));
    }
    std::string key = e.text + "{";
    for (const Expr& a : e.kids) serialize(a, key);
    key += "}";
    // Arguments that grow with each instance (t{x}: t{p{x, x}}) would double.
    if (key.size() > kMaxInstanceKey) {
      b_.fail(e.at, "a template instance's arguments exceed " + std::to_string(kMaxInstanceKey) +
                        " bytes");
    }
    if (d_.defs.count(key) == 0) {
      if (++instances_ > kMaxInstances) {
        b_.fail(e.at, "more than " + std::to_string(kMaxInstances) + " template instances");
      }
      d_.defs.emplace(key, Def{false, substitute(tpl.body, tpl.params, e.kids), tpl.at});
      pending_.push_back(key);
    }
    e.kids.clear();
    e.text = std::move(key);
  }

  Definitions& d_;
  const Templates& templates_;
  const CfgBuilder& b_;
  std::vector<std::string> pending_;  // instances whose bodies are not expanded yet
  size_t instances_ = 0;
};

}  // namespace

void expand_templates(Definitions& d, const Templates& templates, const CfgBuilder& b) {
  Expander(d, templates, b).run();
}

}  // namespace nextok::constraint::cfg::lark
