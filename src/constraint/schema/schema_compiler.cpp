// JSON Schema → grammar IR. A subschema is compiled as a conjunction of
// schema objects ("parts"): $ref and allOf add parts instead of building
// merged documents, so recursion is a memo hit on the same set of parts and
// allOf needs no JSON surgery. anyOf/oneOf distribute over the other parts.
#include "constraint/schema/schema_compiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "constraint/engine/machine.hpp"
#include "constraint/schema/dfa_interner.hpp"
#include "constraint/schema/formats.hpp"
#include "constraint/schema/number_ranges.hpp"
#include "constraint/schema/one_of.hpp"
#include "constraint/schema/schema_not.hpp"
#include "constraint/schema/schema_refs.hpp"
#include "constraint/schema/schema_types.hpp"
#include "constraint/schema/unique_items.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

using json = nlohmann::json;

// Keywords that constrain but are not enforced: strict mode rejects them.
constexpr const char* kUnsupported[] = {
    "contains",         "minContains", "maxContains",  "dependentSchemas", "unevaluatedProperties",
    "unevaluatedItems", "$dynamicRef", "$recursiveRef"};

// The distinct options of an anyOf through nested anyOf (what the matcher
// forks into at its first byte).
size_t flat_option_count(const Grammar& g, const GrammarNode& n) {
  std::set<uint32_t> seen;
  std::vector<uint32_t> work(n.options.begin(), n.options.end());
  size_t count = 0;
  while (!work.empty()) {
    const uint32_t o = work.back();
    work.pop_back();
    if (!seen.insert(o).second) continue;
    const GrammarNode& x = g.nodes[o];
    if (x.kind == NodeKind::kAnyOf) {
      work.insert(work.end(), x.options.begin(), x.options.end());
    } else if (x.kind != NodeKind::kNever) {
      ++count;
    }
  }
  return count;
}

class Compiler {
 public:
  Compiler(const json& root, const SchemaCompileOptions& opt, const StandardDfas& sd)
      : refs_(root), opt_(opt), sd_(sd) {
    if (opt.max_compile_ms > 0)
      deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(opt.max_compile_ms);
    g_.max_whitespace = opt.max_whitespace;
    for (const auto& d : {sd.string, sd.number, sd.integer, sd.true_, sd.false_, sd.null_,
                          sd.integer_strict, sd.key}) {
      g_.dfas.push_back(d);
      g_.shared_dfa.push_back(1);
    }
    // Draft 4 (and 3) does not count 1.0 as an integer; later drafts do.
    if (root.is_object() && root.contains("$schema") && root["$schema"].is_string()) {
      const std::string uri = root["$schema"].get<std::string>();
      draft4_ =
          uri.find("draft-04") != std::string::npos || uri.find("draft-03") != std::string::npos;
    }
  }

  CompiledSchema run(const json& root) {
    g_.root = conj({Part{&root, "", 0}}, 0);
    prune_unproductive(g_);
    if (g_.nodes[g_.root].kind == NodeKind::kNever) {
      fail(ErrorCode::kInvalidArgument, "", "no JSON value satisfies this schema");
    }
    // The matcher carries an anyOf's options side by side; more than it can
    // carry would silently lose some of them.
    for (const auto& n : g_.nodes) {
      if (n.kind == NodeKind::kAnyOf && flat_option_count(g_, n) > Machine::kMaxConfigs) {
        fail(ErrorCode::kUnsupported, "",
             "an anyOf/oneOf with more than " + std::to_string(Machine::kMaxConfigs) +
                 " object or array alternatives is not supported");
      }
    }
    return {std::move(g_), std::move(warnings_)};
  }

 private:
  // --- parts and memo -----------------------------------------------------
  // kExpanded: the part's $ref and allOf are among the parts already. Without
  // it, flattening a conjunction again would add the $ref target afresh,
  // undoing which of its alternatives were distributed.
  enum : uint32_t { kAnyOfDone = 1, kOneOfDone = 2, kExpanded = 4, kIfDone = 8 };
  struct Part {
    const json* j;
    std::string ptr;  // JSON pointer, for errors
    uint32_t done;    // alternatives already distributed
  };
  using Key = std::vector<std::pair<const json*, uint32_t>>;

  [[noreturn]] void fail(ErrorCode code, const std::string& ptr, const std::string& why) const {
    throw Error(code, ptr.empty() ? "/" : ptr,
                "schema at " + (ptr.empty() ? "/" : ptr) + ": " + why);
  }

  void unsupported(const std::string& ptr, const std::string& what) {
    if (opt_.strict) fail(ErrorCode::kUnsupported, ptr, what + " is not supported");
    warnings_.push_back((ptr.empty() ? "/" : ptr) + ": " + what + " is ignored");
  }

  // Past the wall-clock budget the compile stops with an error that names it.
  void tick() const {
    if (opt_.cancel && opt_.cancel->load(std::memory_order_relaxed))
      throw Error(ErrorCode::kInvalidArgument, "cancelled", "schema compile cancelled");
    if (std::chrono::steady_clock::now() > deadline_) {
      fail(ErrorCode::kInvalidArgument, "",
           "schema needs more than max_compile_ms = " + std::to_string(opt_.max_compile_ms) +
               " ms to compile");
    }
  }

  uint32_t add(GrammarNode n) {
    tick();
    if (g_.nodes.size() >= opt_.max_nodes) {
      fail(ErrorCode::kInvalidArgument, "",
           "schema needs more than " + std::to_string(opt_.max_nodes) + " grammar nodes");
    }
    g_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(g_.nodes.size() - 1);
  }

  uint32_t add_dfa(Dfa d) { return add_dfa(std::make_shared<const Dfa>(std::move(d)), false); }
  uint32_t add_dfa(std::shared_ptr<const Dfa> d, bool shared) {
    if (!shared) {
      InternedDfa x = intern_dfa(std::move(d));
      d = std::move(x.dfa);
      shared = x.shared;
    }
    dfa_states_ += d->states();
    if (dfa_states_ > opt_.max_dfa_states) {
      fail(ErrorCode::kInvalidArgument, "",
           "schema needs more than " + std::to_string(opt_.max_dfa_states) + " DFA states");
    }
    g_.dfas.push_back(std::move(d));
    g_.shared_dfa.push_back(shared ? 1 : 0);
    return static_cast<uint32_t>(g_.dfas.size() - 1);
  }

  uint32_t never() {
    if (never_ == kNoNode) never_ = add({});
    return never_;
  }
  // kNever, and not a node whose definition is still being compiled
  // (recursion reaches those before they are filled in).
  bool is_never(uint32_t n) const {
    return g_.nodes[n].kind == NodeKind::kNever && !pending_.contains(n);
  }

  uint32_t leaf(uint32_t dfa) {
    GrammarNode n;
    n.kind = NodeKind::kLeaf;
    n.dfa = dfa;
    return add(std::move(n));
  }

  // Any JSON value: shared by `true`, `{}` and default additionalProperties.
  uint32_t any() {
    if (any_ != kNoNode) return any_;
    any_ = add({});
    GrammarNode obj;
    obj.kind = NodeKind::kObject;
    obj.additional = any_;
    obj.key_dfa = kStringDfa;
    GrammarNode arr;
    arr.kind = NodeKind::kArray;
    arr.items = any_;
    GrammarNode alt;
    alt.kind = NodeKind::kAnyOf;
    alt.options = {add(std::move(obj)), add(std::move(arr)), leaf(kStringDfa), leaf(kNumberDfa),
                   leaf(kTrueDfa),      leaf(kFalseDfa),     leaf(kNullDfa)};
    g_.nodes[any_] = std::move(alt);
    return any_;
  }

  // Expands $ref and allOf into parts; false if some part is `false`.
  bool flatten(std::vector<Part>& parts) {
    std::vector<Part> out;
    for (size_t k = 0; k < parts.size(); ++k) {
      Part p = parts[k];
      const json& j = *p.j;
      if (j.is_boolean()) {
        if (!j.get<bool>()) return false;
        continue;
      }
      if (!j.is_object())
        fail(ErrorCode::kInvalidArgument, p.ptr, "a schema must be an object or a boolean");
      // A schema twice is the same conjunct: the copy already there has at
      // least the alternatives distributed that this one has (new parts
      // come undistributed), and distributing them again changes nothing.
      const bool dup =
          std::any_of(out.begin(), out.end(), [&](const Part& q) { return q.j == p.j; });
      if (dup) continue;
      out.push_back(p);
      out.back().done |= kExpanded;
      if (p.done & kExpanded) continue;
      if (auto it = j.find("$ref"); it != j.end()) {
        if (!it->is_string())
          fail(ErrorCode::kInvalidArgument, p.ptr + "/$ref", "$ref must be a string");
        auto [target, where] = refs_.resolve(it->get<std::string>(), p.j, p.ptr);
        parts.push_back({target, where, 0});
      }
      // not: {not: s} is s.
      if (auto it = j.find("not"); it != j.end() && negation_of(*it, p.ptr + "/not").twice) {
        parts.push_back({&(*it)["not"], p.ptr + "/not/not", 0});
      }
      if (auto it = j.find("allOf"); it != j.end()) {
        if (!it->is_array() || it->empty()) {
          fail(ErrorCode::kInvalidArgument, p.ptr + "/allOf", "allOf must be a non-empty array");
        }
        for (size_t i = 0; i < it->size(); ++i) {
          parts.push_back({&(*it)[i], p.ptr + "/allOf/" + std::to_string(i), 0});
        }
      }
      if (parts.size() > 10000)
        fail(ErrorCode::kInvalidArgument, p.ptr, "allOf/$ref expansion is too large");
    }
    parts = std::move(out);
    return true;
  }

  // --- the conjunction ----------------------------------------------------
  uint32_t conj(std::vector<Part> parts, size_t depth) {
    tick();
    if (depth > opt_.max_depth) {
      fail(ErrorCode::kInvalidArgument, parts.empty() ? "" : parts[0].ptr,
           "schema nesting is deeper than " + std::to_string(opt_.max_depth));
    }
    if (!flatten(parts)) return never();
    if (parts.empty()) return any();
    Key key;
    for (const auto& p : parts) key.emplace_back(p.j, p.done);
    std::sort(key.begin(), key.end());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    const uint32_t self = add({});
    memo_[key] = self;
    pending_.insert(self);
    GrammarNode built = build(parts, depth);
    g_.nodes[self] = std::move(built);
    pending_.erase(self);
    return self;
  }

  GrammarNode build(std::vector<Part>& parts, size_t depth) {
    for (auto& p : parts) {
      for (const char* kw : kUnsupported) {
        if (p.j->contains(kw)) unsupported(p.ptr + "/" + kw, std::string("keyword \"") + kw + "\"");
      }
      if (auto it = p.j->find("not"); it != p.j->end()) {
        const Negation neg = negation_of(*it, p.ptr + "/not");
        if (!neg.unsupported.empty()) unsupported(p.ptr + "/not", neg.unsupported);
        if (neg.everything) return {};
      }
      if (auto it = p.j->find("dependencies"); it != p.j->end() && it->is_object()) {
        for (const auto& [k, v] : it->items()) {
          if (!v.is_array()) {
            unsupported(p.ptr + "/dependencies/" + pointer_escape(k),
                        "dependencies with a schema (dependentSchemas)");
          }
        }
      }
    }
    // if/then/else on a discriminator: the union of its cases.
    for (size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].done & kIfDone || !parts[k].j->contains("if")) continue;
      const std::vector<Case>& cases = if_cases(parts[k]);
      GrammarNode alt;
      alt.kind = NodeKind::kAnyOf;
      for (const Case& c : cases) {
        std::vector<Part> sub = parts;
        sub[k].done |= kIfDone;
        sub.push_back({c.test.get(), parts[k].ptr + "/if", 0});
        if (c.branch) sub.push_back({c.branch, parts[k].ptr + "/" + c.keyword, 0});
        const uint32_t o = conj(std::move(sub), depth + 1);
        if (!is_never(o)) alt.options.push_back(o);
      }
      if (alt.options.empty()) return {};
      merge_leaves(alt.options);
      if (alt.options.size() == 1) return g_.nodes[alt.options[0]];
      return alt;
    }
    // Alternatives distribute over the rest of the conjunction.
    for (size_t k = 0; k < parts.size(); ++k) {
      for (const auto& [kw, bit] :
           {std::pair{"anyOf", kAnyOfDone}, std::pair{"oneOf", kOneOfDone}}) {
        if (parts[k].done & bit) continue;
        auto it = parts[k].j->find(kw);
        if (it == parts[k].j->end()) continue;
        if (!it->is_array() || it->empty()) {
          fail(ErrorCode::kInvalidArgument, parts[k].ptr + "/" + kw,
               std::string(kw) + " must be a non-empty array");
        }
        // Branches that only list values are one enum: no distribution.
        const ValueSplit& split = value_split(*it, bit == kOneOfDone);
        if (split.values && split.others.empty()) {
          const std::string ptr = parts[k].ptr + "/" + kw;
          parts[k].done |= bit;
          parts.push_back({split.values.get(), ptr, 0});
          continue;
        }
        GrammarNode alt;
        alt.kind = NodeKind::kAnyOf;
        auto branch = [&](const json* b, const std::string& ptr) {
          std::vector<Part> sub = parts;
          sub[k].done |= bit;
          sub.push_back({b, ptr, 0});
          const uint32_t o = conj(std::move(sub), depth + 1);
          if (!is_never(o) || bit == kOneOfDone) alt.options.push_back(o);
        };
        const std::string at = parts[k].ptr + "/" + kw;
        if (split.values) {  // anyOf: the value-only branches as one enum, the others each
          branch(split.values.get(), at);
          for (size_t i : split.others) branch(&(*it)[i], at + "/" + std::to_string(i));
        } else {
          for (size_t i = 0; i < it->size(); ++i) branch(&(*it)[i], at + "/" + std::to_string(i));
        }
        // A branch still being compiled (recursion) has no shape yet: it
        // cannot be proven disjoint from the others.
        const bool pending_branch = std::any_of(alt.options.begin(), alt.options.end(),
                                                [&](uint32_t o) { return pending_.contains(o); });
        if (bit == kOneOfDone &&
            (pending_branch || !branches_disjoint(g_, alt.options, [this] { tick(); }))) {
          OneOfContext oc{
              g_,
              sd_,
              pending_,
              [&](std::shared_ptr<const Dfa> d) { return add_dfa(std::move(d), false); },
              [&](GrammarNode n) { return add(std::move(n)); },
              [&] { tick(); },
              std::min<size_t>(opt_.max_dfa_states, 20000)};
          if (auto exclusive = exclusive_branches(oc, alt.options)) {
            alt.options = std::move(*exclusive);
          } else {
            if (opt_.strict) {
              fail(ErrorCode::kUnsupported, parts[k].ptr + "/oneOf",
                   "oneOf branches that may overlap cannot be enforced (use anyOf, or make them "
                   "disjoint by type, const or required properties)");
            }
            warnings_.push_back(parts[k].ptr + "/oneOf: enforced as anyOf");
          }
        }
        std::erase_if(alt.options, [&](uint32_t o) { return is_never(o); });
        if (alt.options.empty()) return {};
        merge_leaves(alt.options);
        if (alt.options.size() == 1) return g_.nodes[alt.options[0]];
        return alt;
      }
    }
    return plain(parts, depth);
  }

  // One case of an if/then/else: a synthesized test and the branch it takes.
  struct Case {
    std::shared_ptr<const json> test;
    const json* branch;  // then or else; null when absent (no constraint)
    std::string keyword;
  };
  const std::vector<Case>& if_cases(const Part& p);
  GrammarNode plain(std::vector<Part>& parts, size_t depth);
  // Many lexeme alternatives become one leaf (their DFAs' union), so the
  // matcher reads them as one lexeme instead of carrying a configuration
  // per alternative (which it caps, refusing the rest).
  void merge_leaves(std::vector<uint32_t>& options) {
    std::vector<const Dfa*> dfas;
    std::vector<uint32_t> kept;
    for (uint32_t o : options) {
      const GrammarNode& n = g_.nodes[o];
      if (n.kind == NodeKind::kLeaf && !n.counts_chars && !pending_.contains(o))
        dfas.push_back(g_.dfas[n.dfa].get());
      else
        kept.push_back(o);
    }
    if (dfas.size() < kMergeLeaves) return;
    Dfa u = Dfa::unite(dfas, std::min<size_t>(opt_.max_dfa_states, 50000), [this] { tick(); });
    kept.push_back(leaf(add_dfa(std::move(u))));
    options = std::move(kept);
  }
  static constexpr size_t kMergeLeaves = 16;
  // The enforceable `not` forms of the parts (unsupported ones were reported).
  std::vector<Negation> negations(const std::vector<Part>& parts) const {
    std::vector<Negation> out;
    for (const auto& p : parts) {
      if (auto it = p.j->find("not"); it != p.j->end()) {
        Negation neg = negation_of(*it, p.ptr + "/not");
        if (neg.unsupported.empty()) out.push_back(std::move(neg));
      }
    }
    return out;
  }
  static bool excluded(const std::vector<Negation>& negs, const json& v) {
    return std::any_of(negs.begin(), negs.end(), [&](const Negation& n) {
      return std::find(n.values.begin(), n.values.end(), v) != n.values.end();
    });
  }
  // d without the texts of the scalars `not` excludes (of d's kind), keeping
  // only spellings the subtraction covers; d itself when none apply.
  std::shared_ptr<const Dfa> without_excluded(std::shared_ptr<const Dfa> d, bool strings,
                                              const std::vector<Negation>& negs, bool& shared);
  std::vector<uint32_t> enum_options(std::vector<Part>& parts, unsigned types, const json& values);
  uint32_t const_node(const json& v);
  InternedDfa pattern_dfa(const std::string& pattern, bool search, const std::string& ptr);
  uint32_t key_dfa(const GrammarNode& n, const Dfa* names);
  std::shared_ptr<const Dfa> property_names_dfa(std::vector<Part> parts);
  uint32_t string_node(std::vector<Part>& parts, std::shared_ptr<const Dfa> literal);
  uint32_t number_node(std::vector<Part>& parts, bool integer);
  bool number_allowed(const std::vector<Part>& parts, const json& v) const {
    return std::all_of(parts.begin(), parts.end(),
                       [&](const Part& p) { return number_satisfies(*p.j, v); });
  }
  uint32_t object_node(std::vector<Part>& parts, size_t depth);
  uint32_t array_node(std::vector<Part>& parts, size_t depth);
  bool enum_values(const std::vector<Part>& parts, unsigned& types, json& common);
  struct ValueSplit {
    std::unique_ptr<const json> values;  // {"enum": [...]} of the value-only branches; null: none
    std::vector<size_t> others;          // the branches that constrain otherwise
  };
  const ValueSplit& value_split(const json& branches, bool one_of);
  static std::optional<json> listed_values(const json& branch);
  std::shared_ptr<const Dfa> enum_dfa_ptr(std::vector<std::string> texts, bool strings);
  std::optional<std::vector<json>> finite_values(std::vector<Part> parts, size_t depth);
  void make_unique(GrammarNode& n, std::vector<Part> item_parts, const std::string& ptr);

  static constexpr uint32_t kStringDfa = 0, kNumberDfa = 1, kIntegerDfa = 2, kTrueDfa = 3,
                            kFalseDfa = 4, kNullDfa = 5, kStrictIntegerDfa = 6, kKeyDfa = 7;
  bool draft4_ = false;

  SchemaRefs refs_;
  SchemaCompileOptions opt_;
  const StandardDfas& sd_;
  Grammar g_;
  std::vector<std::string> warnings_;
  std::map<Key, uint32_t> memo_;
  // Per if-bearing schema, its cases (kept so recursion meets the same parts).
  std::map<const json*, std::vector<Case>> if_cases_;
  // Per anyOf/oneOf array: its value-only branches as one enum.
  std::map<const json*, ValueSplit> value_splits_;
  std::map<std::vector<std::string>, std::shared_ptr<const Dfa>> enum_dfas_;
  std::set<uint32_t> pending_;
  uint32_t never_ = kNoNode, any_ = kNoNode;
  size_t dfa_states_ = 0;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

// --- values ----------------------------------------------------------------

// if: {properties: {k: D}, required?: [k]} where `not: D` is enforceable
// (a const, enum or type test): (if ∧ then) ∨ (¬if ∧ else) as cases.
// JSON Schema's `properties` and `required` hold for non-objects, so a
// non-object takes `then`; an object takes `then` when k matches D (or is
// absent and not required), else `else`.
const std::vector<Compiler::Case>& Compiler::if_cases(const Part& p) {
  if (auto it = if_cases_.find(p.j); it != if_cases_.end()) return it->second;
  const json& test = p.j->at("if");
  const json* then_ = p.j->contains("then") ? &p.j->at("then") : nullptr;
  const json* else_ = p.j->contains("else") ? &p.j->at("else") : nullptr;
  std::string key;
  const json* d = nullptr;
  bool required = false, shape = test.is_object();
  static const json kNothing = json::object();
  if (test.is_boolean()) {  // if: true / false picks a branch outright
    std::vector<Case> one = {{std::make_shared<const json>(json::object()),
                              test.get<bool>() ? then_ : else_,
                              test.get<bool>() ? "then" : "else"}};
    return if_cases_[p.j] = std::move(one);
  }
  for (const auto& [kw, v] : (shape ? test : kNothing).items()) {
    if (kw == "properties" && v.is_object() && v.size() == 1) {
      key = v.begin().key();
      d = &v.begin().value();
    } else if (kw == "required" && v.is_array() && v.size() == 1 && v[0].is_string()) {
      required = true;
    } else if (kw != "title" && kw != "description" && kw != "$comment") {
      shape = false;
    }
  }
  if (shape && required) shape = d && test["required"][0] == key;
  if (shape && d) {
    const Negation neg = negation_of(*d, p.ptr + "/if/properties");
    shape = neg.unsupported.empty() && !neg.everything && !neg.twice;
  }
  std::vector<Case> cases;
  if (!shape || !d) {
    unsupported(p.ptr + "/if",
                "if other than a test of one property against a const, enum or type");
    cases.push_back(
        {std::make_shared<const json>(json::object()), nullptr, "if"});  // lenient: ignored
    return if_cases_[p.j] = std::move(cases);
  }
  const json props = {{key, *d}};
  const json not_props = {{key, {{"not", *d}}}};
  auto add_case = [&](json t, const json* branch, const char* kw) {
    cases.push_back({std::make_shared<const json>(std::move(t)), branch, kw});
  };
  add_case({{"not", {{"type", "object"}}}}, then_, "then");
  json taken = {{"type", "object"}, {"properties", props}};
  if (required) taken["required"] = json::array({key});
  add_case(std::move(taken), then_, "then");
  add_case({{"type", "object"}, {"required", json::array({key})}, {"properties", not_props}}, else_,
           "else");
  if (required)
    add_case({{"type", "object"}, {"not", {{"required", json::array({key})}}}}, else_, "else");
  return if_cases_[p.j] = std::move(cases);
}

// The types the parts allow, and the intersection of their enum/const lists
// in `common`; false when none has enum or const.
bool Compiler::enum_values(const std::vector<Part>& parts, unsigned& types, json& common) {
  bool any = false;
  for (const auto& p : parts) {
    if (auto it = p.j->find("type"); it != p.j->end()) types &= parse_types(*it, p.ptr + "/type");
    for (const char* kw : {"enum", "const"}) {
      auto it = p.j->find(kw);
      if (it == p.j->end()) continue;
      json list = std::string(kw) == "const" ? json::array({*it}) : *it;
      if (!list.is_array())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/enum", "enum must be an array");
      if (list.size() > opt_.max_enum_values) {
        fail(ErrorCode::kInvalidArgument, p.ptr + "/" + kw,
             "enum has more than " + std::to_string(opt_.max_enum_values) + " values");
      }
      if (!any) {
        common = std::move(list);
      } else {
        json keep = json::array();
        for (const auto& v : common)
          if (std::find(list.begin(), list.end(), v) != list.end()) keep.push_back(v);
        common = std::move(keep);
      }
      any = true;
    }
  }
  return any;
}

// Keywords that constrain an instance besides enum and const: a branch with
// none of them only lists values (the rest are annotations or unknown).
constexpr const char* kConstraining[] = {"type",
                                         "multipleOf",
                                         "maximum",
                                         "exclusiveMaximum",
                                         "minimum",
                                         "exclusiveMinimum",
                                         "maxLength",
                                         "minLength",
                                         "pattern",
                                         "format",
                                         "maxItems",
                                         "minItems",
                                         "uniqueItems",
                                         "maxContains",
                                         "minContains",
                                         "contains",
                                         "maxProperties",
                                         "minProperties",
                                         "required",
                                         "dependentRequired",
                                         "dependencies",
                                         "properties",
                                         "patternProperties",
                                         "additionalProperties",
                                         "items",
                                         "prefixItems",
                                         "additionalItems",
                                         "propertyNames",
                                         "unevaluatedItems",
                                         "unevaluatedProperties",
                                         "allOf",
                                         "anyOf",
                                         "oneOf",
                                         "not",
                                         "if",
                                         "then",
                                         "else",
                                         "dependentSchemas",
                                         "$ref",
                                         "$dynamicRef",
                                         "$recursiveRef"};

// anyOf of branches that only list values (enum/const and annotations) is
// the enum of their union; oneOf keeps the values exactly one branch lists.
// Distributing such branches one by one would multiply the conjunction by
// their count (an anyOf of 259 consts under a pattern: 259 conjunctions).
// In an anyOf, value-only branches merge even when others do not; a oneOf
// merges only when every branch lists values (the others could match them).
const Compiler::ValueSplit& Compiler::value_split(const json& branches, bool one_of) {
  if (auto it = value_splits_.find(&branches); it != value_splits_.end()) return it->second;
  ValueSplit& split = value_splits_[&branches];
  std::vector<json> values;
  std::vector<size_t> branches_with;  // per value: how many branches list it
  std::map<json, size_t> index;       // value → its place in `values`
  size_t listing = 0;                 // value-only branches
  for (size_t i = 0; i < branches.size(); ++i) {
    tick();
    const std::optional<json> mine = listed_values(branches[i]);
    if (!mine) {
      if (one_of) return split;
      split.others.push_back(i);
      continue;
    }
    ++listing;
    const std::set<json> distinct(mine->begin(),
                                  mine->end());  // json's < compares numbers by value
    for (const auto& x : distinct) {
      auto [at, fresh] = index.emplace(x, values.size());
      if (fresh) {
        values.push_back(x);
        branches_with.push_back(1);
      } else {
        ++branches_with[at->second];
      }
    }
  }
  if (listing < 2) {
    split.others.clear();
    return split;
  }
  json out = json::array();
  for (size_t i = 0; i < values.size(); ++i)
    if (!one_of || branches_with[i] == 1) out.push_back(values[i]);
  split.values = std::make_unique<const json>(json{{"enum", std::move(out)}});
  return split;
}

// The values a branch lists (const ∩ enum) when it has no other
// constraining keyword; nullopt otherwise.
std::optional<json> Compiler::listed_values(const json& b) {
  if (!b.is_object()) return std::nullopt;
  std::optional<json> mine;
  for (const auto& [k, v] : b.items()) {
    if (k == "enum" || k == "const") {
      if (k == "enum" && !v.is_array()) return std::nullopt;  // the plain path reports it
      json list = k == "const" ? json::array({v}) : v;
      if (!mine) {
        mine = std::move(list);
      } else {
        json keep = json::array();
        for (const auto& x : *mine)
          if (std::find(list.begin(), list.end(), x) != list.end()) keep.push_back(x);
        mine = std::move(keep);
      }
    } else if (std::any_of(std::begin(kConstraining), std::end(kConstraining),
                           [&](const char* c) { return k == c; })) {
      return std::nullopt;
    }
  }
  return mine;
}

// A finite superset of the values the parts admit, when one is evident:
// their enum/const lists, the union over an anyOf/oneOf's branches, or
// booleans and null by type. nullopt when the set may be infinite.
std::optional<std::vector<json>> Compiler::finite_values(std::vector<Part> parts, size_t depth) {
  if (depth > 8) return std::nullopt;
  if (!flatten(parts)) return std::vector<json>{};
  unsigned types = kAllTypes;
  json common;
  if (enum_values(parts, types, common)) return common.get<std::vector<json>>();
  for (size_t k = 0; k < parts.size(); ++k) {
    for (const auto& [kw, bit] : {std::pair{"anyOf", kAnyOfDone}, std::pair{"oneOf", kOneOfDone}}) {
      auto it = parts[k].j->find(kw);
      if (parts[k].done & bit || it == parts[k].j->end() || !it->is_array()) continue;
      std::vector<json> all;
      for (size_t i = 0; i < it->size(); ++i) {
        std::vector<Part> sub = parts;
        sub[k].done |= bit;
        sub.push_back({&(*it)[i], parts[k].ptr + "/" + kw + "/" + std::to_string(i), 0});
        auto r = finite_values(std::move(sub), depth + 1);
        if (!r) return std::nullopt;
        all.insert(all.end(), r->begin(), r->end());
      }
      return all;
    }
  }
  if ((types & ~(kNull | kBoolean)) == 0) return std::vector<json>{nullptr, true, false};
  return std::nullopt;
}

// uniqueItems: true on array n, exact where its items are a finite set of
// scalars: they become value leaves and the array tracks the ids it holds.
// Otherwise a strict error.
void Compiler::make_unique(GrammarNode& n, std::vector<Part> item_parts, const std::string& ptr) {
  if (n.items == kNoNode && n.prefix.empty()) return;
  if (!n.prefix.empty()) return unsupported(ptr, "uniqueItems: true with prefixItems");
  const auto candidates = finite_values(std::move(item_parts), 0);
  const bool scalars =
      candidates && std::none_of(candidates->begin(), candidates->end(),
                                 [](const json& v) { return v.is_object() || v.is_array(); });
  if (!scalars) {
    return unsupported(ptr,
                       "uniqueItems: true over items other than a finite set of scalars "
                       "(enum, const, boolean, null)");
  }
  const std::vector<json> values = accepted_values(g_, n.items, *candidates);
  if (values.size() > kMaxUniqueValues) {
    return unsupported(
        ptr, "uniqueItems: true over more than " + std::to_string(kMaxUniqueValues) + " values");
  }
  n.max_items = std::min(n.max_items, static_cast<uint32_t>(values.size()));
  n.unique = true;
  if (values.empty()) {
    n.items = kNoNode;
    return;
  }
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  for (ValueLeaf& l : value_leaves(values, opt_.max_dfa_states)) {
    GrammarNode leaf;
    leaf.kind = NodeKind::kLeaf;
    leaf.dfa = add_dfa(std::move(l.dfa));
    leaf.value_ids = std::move(l.value_ids);
    alt.options.push_back(add(std::move(leaf)));
  }
  n.items = alt.options.size() == 1 ? alt.options[0] : add(std::move(alt));
}

GrammarNode Compiler::plain(std::vector<Part>& parts, size_t depth) {
  unsigned types = kAllTypes;
  json common;  // the intersection of several enum/const lists
  const json* values = enum_values(parts, types, common) ? &common : nullptr;
  const std::vector<Negation> negs = negations(parts);
  for (const auto& n : negs) types &= ~n.types;
  if (types & kInteger && types & kNumber) types &= ~kInteger;  // integer ⊂ number
  std::vector<uint32_t> options;
  if (values) {
    json keep = json::array();
    for (const auto& v : *values)
      if (!excluded(negs, v)) keep.push_back(v);
    common = std::move(keep);
    options = enum_options(parts, types, common);
  } else {
    if (types & kNull && !excluded(negs, nullptr)) options.push_back(leaf(kNullDfa));
    if (types & kBoolean) {
      if (!excluded(negs, true)) options.push_back(leaf(kTrueDfa));
      if (!excluded(negs, false)) options.push_back(leaf(kFalseDfa));
    }
    if (types & kString) options.push_back(string_node(parts, nullptr));
    if (types & (kNumber | kInteger)) options.push_back(number_node(parts, !(types & kNumber)));
    if (types & kObject) options.push_back(object_node(parts, depth));
    if (types & kArray) options.push_back(array_node(parts, depth));
  }
  std::erase_if(options, [&](uint32_t o) { return is_never(o); });
  if (options.empty()) return {};
  if (options.size() == 1) return g_.nodes[options[0]];
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  alt.options = std::move(options);
  return alt;
}

// No two items equal (JSON equality).
static bool items_unique(const json& a) {
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = i + 1; k < a.size(); ++k)
      if (a[i] == a[k]) return false;
  return true;
}

std::vector<uint32_t> Compiler::enum_options(std::vector<Part>& parts, unsigned types,
                                             const json& values) {
  std::vector<std::string> strings, scalars;
  std::vector<uint32_t> options;
  for (const auto& v : values) {
    if (v.is_string()) {
      if (types & kString) strings.push_back(v.get<std::string>());
    } else if (v.is_number()) {
      const bool integral =
          v.is_number_integer() || v.is_number_unsigned() ||
          (v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
      if ((types & kNumber || (types & kInteger && integral)) && number_allowed(parts, v)) {
        scalars.push_back(number_spellings(v, integral));
      }
    } else if (v.is_boolean()) {
      if (types & kBoolean) scalars.push_back(v.dump());  // true / false: no regex syntax
    } else if (v.is_null()) {
      if (types & kNull) scalars.push_back("null");
    } else if ((v.is_object() && types & kObject) || (v.is_array() && types & kArray)) {
      for (const auto& p : parts) {
        for (const char* kw : {"properties", "required", "additionalProperties",
                               "patternProperties", "items", "prefixItems", "minItems", "maxItems",
                               "minProperties", "maxProperties", "additionalItems"}) {
          if (p.j->contains(kw))
            unsupported(p.ptr + "/" + kw, std::string(kw) + " together with enum/const");
        }
      }
      const bool unique = std::any_of(parts.begin(), parts.end(), [](const Part& p) {
        auto it = p.j->find("uniqueItems");
        return it != p.j->end() && it->is_boolean() && it->get<bool>();
      });
      if (v.is_array() && unique && !items_unique(v)) continue;
      options.push_back(const_node(v));
    }
  }
  if (!strings.empty())
    options.push_back(string_node(parts, enum_dfa_ptr(std::move(strings), true)));
  if (!scalars.empty()) {
    std::sort(scalars.begin(), scalars.end());
    scalars.erase(std::unique(scalars.begin(), scalars.end()), scalars.end());
    options.push_back(leaf(add_dfa(enum_dfa_ptr(std::move(scalars), false), false)));
  }
  return options;
}

// The DFA of enumerated strings (literal content) or scalar spellings
// (regexes), compiled once per list: a list met under many conjunctions
// (an enum beside each branch of a large anyOf) is not compiled again.
std::shared_ptr<const Dfa> Compiler::enum_dfa_ptr(std::vector<std::string> texts, bool strings) {
  texts.push_back(strings ? "s" : "n");  // the key's last entry: which kind
  auto& slot = enum_dfas_[texts];
  if (!slot) {
    std::vector<RegexAlternative> alts;
    for (size_t i = 0; i + 1 < texts.size(); ++i) alts.push_back({texts[i], strings});
    RegexOptions ro;
    ro.json_string = strings;
    ro.max_states = opt_.max_dfa_states;
    slot = std::make_shared<const Dfa>(Dfa::compile_labeled(alts, ro));
  }
  return slot;
}

// An object or array value of enum/const, exactly (any whitespace).
uint32_t Compiler::const_node(const json& v) {
  if (v.is_object()) {
    GrammarNode n;
    n.kind = NodeKind::kObject;
    if (v.size() > 64) fail(ErrorCode::kUnsupported, "", "const objects with more than 64 keys");
    for (const auto& [k, x] : v.items()) {
      n.required.push_back(static_cast<uint32_t>(n.props.size()));
      n.props.push_back({k, const_node(x)});
    }
    n.key_dfa = key_dfa(n, nullptr);
    return add(std::move(n));
  }
  if (v.is_array()) {
    GrammarNode n;
    n.kind = NodeKind::kArray;
    for (const auto& x : v) n.prefix.push_back(const_node(x));
    n.min_items = n.max_items = static_cast<uint32_t>(v.size());
    return add(std::move(n));
  }
  RegexOptions ro;
  ro.json_string = v.is_string();
  if (v.is_number()) {  // 1 and 1.0 are the same value
    const double d = v.get<double>();
    const std::string re = number_spellings(v, d == std::floor(d));
    const RegexAlternative alt{re, false};
    return leaf(add_dfa(Dfa::compile_labeled(std::span(&alt, 1), ro)));
  }
  const std::string content = v.is_string() ? v.get<std::string>() : v.dump();
  const RegexAlternative alt{content, true};
  return leaf(add_dfa(Dfa::compile_labeled(std::span(&alt, 1), ro)));
}

InternedDfa Compiler::pattern_dfa(const std::string& pattern, bool search, const std::string& ptr) {
  RegexOptions ro;
  ro.json_string = true;
  ro.full_match = !search;
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  try {
    return intern_dfa((search ? "s:" : "f:") + std::to_string(ro.max_states) + ":" + pattern,
                      [&] { return Dfa::compile(pattern, ro); });
  } catch (const Error& e) {
    fail(e.code(), ptr, e.what());
  }
}

uint32_t Compiler::string_node(std::vector<Part>& parts, std::shared_ptr<const Dfa> literal) {
  std::shared_ptr<const Dfa> d = literal;
  bool shared = false;
  uint32_t min_chars = 0, max_chars = kUnbounded;
  auto narrow = [&](InternedDfa x) {
    if (!d) {
      d = std::move(x.dfa);
      shared = x.shared;
      return;
    }
    d = std::make_shared<const Dfa>(
        Dfa::intersect(*d, *x.dfa, std::min<size_t>(opt_.max_dfa_states, 20000)));
    shared = false;
  };
  for (const auto& p : parts) {
    if (auto it = p.j->find("pattern"); it != p.j->end()) {
      if (!it->is_string())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/pattern", "pattern must be a string");
      try {
        narrow(pattern_dfa(it->get<std::string>(), true, p.ptr + "/pattern"));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnsupported || opt_.strict) throw;
        warnings_.push_back(p.ptr + "/pattern: " + e.what() + "; ignored");
      }
    }
    if (auto it = p.j->find("format"); it != p.j->end() && it->is_string()) {
      if (auto re = format_regex(it->get<std::string>())) {
        narrow(pattern_dfa(*re, false, p.ptr + "/format"));
      } else {
        // An annotation in draft 2020-12, but users expect it to hold.
        unsupported(p.ptr + "/format", "format \"" + it->get<std::string>() + "\"");
      }
    }
    if (auto it = p.j->find("minLength"); it != p.j->end()) {
      min_chars = std::max(min_chars, count_of(*it, p.ptr + "/minLength"));
    }
    if (auto it = p.j->find("maxLength"); it != p.j->end()) {
      max_chars = std::min(max_chars, count_of(*it, p.ptr + "/maxLength"));
    }
  }
  if (!literal) {
    const std::vector<Negation> negs = negations(parts);
    if (!negs.empty()) {
      bool from_std = !d;
      if (!d) d = sd_.string;
      std::shared_ptr<const Dfa> rest = without_excluded(d, true, negs, shared);
      if (rest == d && from_std)
        d = nullptr;  // nothing excluded: the standard DFA
      else
        d = std::move(rest);
    }
  }
  if (min_chars > max_chars || (d && d->empty())) return never();
  if (d && (min_chars > 0 || max_chars != kUnbounded)) {
    // The pattern and the lengths together may admit no string at all.
    const LengthBounds lb = LengthBounds::of(*d);
    const int32_t open = d->next(d->start(), '"');
    if (open < 0 || lb.min_at(open, 0) > max_chars ||
        (lb.max_at(open, 0) != kUnbounded && lb.max_at(open, 0) < min_chars)) {
      return never();
    }
  }
  GrammarNode n;
  n.kind = NodeKind::kLeaf;
  n.dfa = d ? add_dfa(std::move(d), shared) : kStringDfa;
  n.counts_chars = min_chars > 0 || max_chars != kUnbounded;
  n.min_chars = min_chars;
  n.max_chars = max_chars;
  return add(std::move(n));
}

uint32_t Compiler::number_node(std::vector<Part>& parts, bool integer) {
  NumberBounds b;
  bool bounded = false;
  for (const auto& p : parts) bounded |= b.add(*p.j, p.ptr);
  std::optional<std::string> multiple_re;
  for (const auto& p : parts) {
    auto it = p.j->find("multipleOf");
    if (it == p.j->end()) continue;
    if (!it->is_number() || it->get<double>() <= 0) {
      fail(ErrorCode::kInvalidArgument, p.ptr + "/multipleOf", "multipleOf must be a number > 0");
    }
    if (auto re = multiple_of_regex(*it, integer)) {
      if (multiple_re) unsupported(p.ptr + "/multipleOf", "several multipleOf");
      multiple_re = re;
    } else {
      unsupported(p.ptr + "/multipleOf", "multipleOf " + it->dump());
    }
  }
  const std::vector<Negation> negs = negations(parts);
  const bool excludes = std::any_of(negs.begin(), negs.end(), [](const Negation& n) {
    return std::any_of(n.values.begin(), n.values.end(),
                       [](const json& v) { return v.is_number(); });
  });
  if (!bounded && !multiple_re && !excludes)
    return leaf(integer ? (draft4_ ? kStrictIntegerDfa : kIntegerDfa) : kNumberDfa);
  RegexOptions ro;
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  std::string re = integer ? kIntegerRegexText : kNumberRegex;
  if (bounded) {
    auto range = number_range_regex(b.lo, b.hi, integer);
    if (!range) return never();
    re = *range;
  }
  InternedDfa x = intern_dfa("n:" + re, [&] { return Dfa::compile(re, ro); });
  std::shared_ptr<const Dfa> d = x.dfa;
  if (multiple_re) {
    d = std::make_shared<const Dfa>(
        Dfa::intersect(*d, Dfa::compile(*multiple_re, ro), ro.max_states));
    x.shared = false;
  }
  if (integer && draft4_) {
    d = std::make_shared<const Dfa>(Dfa::intersect(*d, *sd_.integer_strict, ro.max_states));
    x.shared = false;
  }
  d = without_excluded(std::move(d), false, negs, x.shared);
  if (d->empty()) return never();
  return leaf(add_dfa(std::move(d), x.shared));
}

std::shared_ptr<const Dfa> Compiler::without_excluded(std::shared_ptr<const Dfa> d, bool strings,
                                                      const std::vector<Negation>& negs,
                                                      bool& shared) {
  std::vector<std::string> texts;
  for (const auto& n : negs) {
    for (const auto& v : n.values) {
      if (strings && v.is_string()) texts.push_back(v.get<std::string>());
      if (!strings && v.is_number()) {
        const double x = v.get<double>();
        texts.push_back(number_spellings(v, x == std::floor(x)));
      }
    }
  }
  if (texts.empty()) return d;
  std::vector<RegexAlternative> alts;
  for (const auto& t : texts) alts.push_back({t, strings});
  RegexOptions ro;
  ro.json_string = strings;
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  const Dfa gone = Dfa::compile_labeled(alts, ro);
  // Keep only spellings whose every variant `gone` lists (see one_of.hpp).
  const Dfa& plain = strings ? plain_spelled_strings() : plain_decimals();
  shared = false;
  return std::make_shared<const Dfa>(
      Dfa::subtract(Dfa::intersect(*d, plain, ro.max_states), gone, ro.max_states));
}

// --- containers ------------------------------------------------------------

// The labeled key automaton of an object node (see GrammarNode).
// propertyNames: the JSON string texts a key may be (a string schema's
// DFA: pattern, format, lengths, enum or const); other keywords are a
// strict error.
std::shared_ptr<const Dfa> Compiler::property_names_dfa(std::vector<Part> parts) {
  if (!flatten(parts)) return std::make_shared<const Dfa>();  // propertyNames: false
  static constexpr const char* kNameKeywords[] = {
      "type", "pattern", "format", "minLength", "maxLength", "enum", "const", "$ref", "allOf"};
  for (const auto& p : parts) {
    for (const auto& [k, v] : p.j->items()) {
      const bool constrains = std::any_of(std::begin(kConstraining), std::end(kConstraining),
                                          [&](const char* c) { return k == c; }) ||
                              k == "enum" || k == "const";
      const bool known = std::any_of(std::begin(kNameKeywords), std::end(kNameKeywords),
                                     [&](const char* c) { return k == c; });
      if (constrains && !known) unsupported(p.ptr + "/" + k, "propertyNames with " + k);
    }
  }
  unsigned types = kAllTypes;
  json common;
  const bool listed = enum_values(parts, types, common);
  if (!(types & kString)) return std::make_shared<const Dfa>();  // names are strings
  std::shared_ptr<const Dfa> lit;
  if (listed) {
    std::vector<std::string> strings;
    for (const auto& v : common)
      if (v.is_string()) strings.push_back(v.get<std::string>());
    if (strings.empty()) return std::make_shared<const Dfa>();
    lit = enum_dfa_ptr(std::move(strings), true);
  }
  const GrammarNode leaf = g_.nodes[string_node(parts, lit)];
  if (leaf.kind != NodeKind::kLeaf) return std::make_shared<const Dfa>();
  std::shared_ptr<const Dfa> d = g_.dfas[leaf.dfa];
  if (leaf.counts_chars) {  // lengths as a pattern over the decoded name
    if (leaf.max_chars != kUnbounded && leaf.max_chars > 1000) {
      unsupported(parts[0].ptr, "propertyNames with maxLength over 1000");
      return d;
    }
    RegexOptions ro;
    ro.json_string = true;
    ro.max_states = opt_.max_dfa_states;
    const std::string hi = leaf.max_chars == kUnbounded ? "" : std::to_string(leaf.max_chars);
    const Dfa lengths = Dfa::compile("[^]{" + std::to_string(leaf.min_chars) + "," + hi + "}", ro);
    d = std::make_shared<const Dfa>(Dfa::intersect(*d, lengths, opt_.max_dfa_states));
  }
  return d;
}

uint32_t Compiler::key_dfa(const GrammarNode& n, const Dfa* names) {
  // Keys propertyNames narrows: the key automaton (its labels kept) within
  // the names it allows.
  if (names) {
    const uint32_t plain = key_dfa(n, nullptr);
    return add_dfa(Dfa::restrict(*g_.dfas[plain], *names, opt_.max_dfa_states));
  }
  // Where no key's name matters (no declared or pattern names), keys take
  // every string spelling, as values do; names that matter keep one
  // spelling each so that an escape cannot dodge their schema.
  if (n.props.empty() && n.pattern_props.empty() && n.additional != kNoNode) return kStringDfa;
  std::vector<RegexAlternative> alts;
  for (const auto& p : n.props) alts.push_back({p.name, true});
  // Each pattern twice: with ECMA classes (ASCII \\w \\d \\s, the JSON Schema
  // meaning) and with Unicode ones (what Python and Rust validators use); a
  // key only one of them matches is refused, since validators disagree.
  for (const auto& p : n.pattern_props) {
    alts.push_back({p.pattern, false, false});
    alts.push_back({p.pattern, false, true});
  }
  if (n.additional != kNoNode) alts.push_back({"[^]*", false});
  RegexOptions ro;
  ro.json_string = true;
  ro.canonical_escapes = true;
  ro.full_match = false;  // patterns search; literals are always whole
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  if (alts.empty()) return add_dfa(Dfa{});
  // "[^]*" with search semantics is still every string.
  return add_dfa(Dfa::compile_labeled(alts, ro));
}

uint32_t Compiler::object_node(std::vector<Part>& parts, size_t depth) {
  GrammarNode n;
  n.kind = NodeKind::kObject;
  // Declared names, in order of first appearance; required ones first so
  // that they fit the matcher's 64-bit seen set.
  std::vector<std::string> names, required;
  // dependentRequired (and dependencies' array form): name → names it needs.
  std::vector<std::pair<std::string, std::vector<std::string>>> needs;
  const Part* with_patterns = nullptr;
  auto declare = [&](const std::string& k) {
    if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  };
  const std::vector<Negation> negs = negations(parts);
  for (const auto& neg : negs)
    for (const auto& set : neg.forbidden)
      for (const auto& k : set) declare(k);
  for (const auto& p : parts) {
    for (const char* kw : {"dependentRequired", "dependencies"}) {
      auto it = p.j->find(kw);
      if (it == p.j->end()) continue;
      if (!it->is_object())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/" + kw, std::string(kw) + " must be an object");
      for (const auto& [k, v] : it->items()) {
        if (!v.is_array()) continue;  // a schema: refused in build()
        std::vector<std::string> list;
        for (const auto& r : v) {
          if (!r.is_string()) {
            fail(ErrorCode::kInvalidArgument, p.ptr + "/" + kw + "/" + pointer_escape(k),
                 "dependent names must be strings");
          }
          list.push_back(r.get<std::string>());
          declare(list.back());
        }
        declare(k);
        needs.push_back({k, std::move(list)});
      }
    }
    if (auto it = p.j->find("properties"); it != p.j->end()) {
      if (!it->is_object())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/properties", "properties must be an object");
      for (const auto& [k, v] : it->items()) {
        if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
      }
    }
    if (auto it = p.j->find("required"); it != p.j->end()) {
      if (!it->is_array())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/required", "required must be an array");
      for (const auto& r : *it) {
        if (!r.is_string())
          fail(ErrorCode::kInvalidArgument, p.ptr + "/required", "required names must be strings");
        if (std::find(required.begin(), required.end(), r.get<std::string>()) == required.end()) {
          required.push_back(r.get<std::string>());
        }
        if (std::find(names.begin(), names.end(), r.get<std::string>()) == names.end()) {
          names.push_back(r.get<std::string>());
        }
      }
    }
    if (auto it = p.j->find("patternProperties"); it != p.j->end() && !it->empty()) {
      if (!it->is_object()) {
        fail(ErrorCode::kInvalidArgument, p.ptr + "/patternProperties",
             "patternProperties must be an object");
      }
      if (with_patterns)
        unsupported(p.ptr + "/patternProperties", "patternProperties in several allOf parts");
      with_patterns = &p;
    }
    for (const char* kw : {"minProperties", "maxProperties"}) {
      if (auto it = p.j->find(kw); it != p.j->end()) {
        const uint32_t v = count_of(*it, p.ptr + "/" + kw);
        if (kw[1] == 'i')
          n.min_props = std::max(n.min_props, v);
        else
          n.max_props = std::min(n.max_props, v);
      }
    }
  }
  if (required.size() > 64) {
    unsupported(parts[0].ptr + "/required", "more than 64 required properties");
  }
  // A required name's dependents are required too.
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [k, list] : needs) {
      if (std::find(required.begin(), required.end(), k) == required.end()) continue;
      for (const auto& r : list) {
        if (std::find(required.begin(), required.end(), r) != required.end()) continue;
        required.push_back(r);
        grew = true;
      }
    }
  }
  auto in_needs = [&](const std::string& k) {
    const bool in_forbidden = std::any_of(negs.begin(), negs.end(), [&](const Negation& ng) {
      return std::any_of(ng.forbidden.begin(), ng.forbidden.end(), [&](const auto& f) {
        return f.size() > 1 && std::find(f.begin(), f.end(), k) != f.end();
      });
    });
    return in_forbidden || std::any_of(needs.begin(), needs.end(), [&](const auto& d) {
             return d.first == k ||
                    std::find(d.second.begin(), d.second.end(), k) != d.second.end();
           });
  };
  // Required names first, then those in dependencies: they need seen bits.
  std::stable_partition(names.begin(), names.end(),
                        [&](const std::string& k) { return in_needs(k); });
  std::stable_partition(names.begin(), names.end(), [&](const std::string& k) {
    return std::find(required.begin(), required.end(), k) != required.end();
  });
  // The schema of one key in one part: properties, else matching
  // patternProperties, else additionalProperties, else anything.
  auto schemas_for = [&](const std::string& key, std::vector<Part>& out) {
    for (const auto& p : parts) {
      const json& j = *p.j;
      bool matched = false;
      if (auto it = j.find("properties"); it != j.end() && it->contains(key)) {
        out.push_back({&(*it)[key], p.ptr + "/properties/" + pointer_escape(key), 0});
        matched = true;
      }
      if (auto it = j.find("patternProperties"); it != j.end()) {
        for (const auto& [pat, sub] : it->items()) {
          RegexOptions ro;
          ro.full_match = false;
          ro.unicode_classes = true;
          if (Dfa::compile(pat, ro).matches(key)) {
            out.push_back({&sub, p.ptr + "/patternProperties/" + pointer_escape(pat), 0});
            matched = true;
          }
        }
      }
      if (matched) continue;
      if (auto it = j.find("additionalProperties"); it != j.end()) {
        out.push_back({&*it, p.ptr + "/additionalProperties", 0});
      }
    }
  };
  for (const auto& k : names) {
    std::vector<Part> sub;
    schemas_for(k, sub);
    const uint32_t v = conj(std::move(sub), depth + 1);
    const bool req = std::find(required.begin(), required.end(), k) != required.end();
    if (req) {
      if (is_never(v)) return never();
      n.required.push_back(static_cast<uint32_t>(n.props.size()));
    }
    n.props.push_back({k, v});
  }
  // not: {required: [...]}: a lone name is forbidden; a larger set may not
  // be complete.
  for (const auto& neg : negs) {
    for (const auto& set : neg.forbidden) {
      std::vector<uint32_t> idx;
      for (const auto& k : set)
        idx.push_back(
            static_cast<uint32_t>(std::find(names.begin(), names.end(), k) - names.begin()));
      const bool all_required = std::all_of(idx.begin(), idx.end(), [&](uint32_t i) {
        return std::find(n.required.begin(), n.required.end(), i) != n.required.end();
      });
      if (all_required) return never();
      if (idx.size() == 1) {
        n.props[idx[0]].node = never();
      } else if (std::any_of(idx.begin(), idx.end(), [](uint32_t i) { return i >= 63; })) {
        unsupported(parts[0].ptr + "/not", "not: {required} over more than 63 names");
      } else {
        n.forbidden.push_back(std::move(idx));
      }
    }
  }
  if (!needs.empty()) {
    if (n.max_props != kUnbounded) {
      unsupported(parts[0].ptr + "/dependentRequired", "dependentRequired with maxProperties");
    }
    auto index = [&](const std::string& k) {
      const auto at =
          static_cast<uint32_t>(std::find(names.begin(), names.end(), k) - names.begin());
      if (at >= 63)
        unsupported(parts[0].ptr + "/dependentRequired", "more than 63 dependent names");
      return at;
    };
    for (const auto& [k, list] : needs) {
      std::vector<uint32_t> idx;
      for (const auto& r : list) idx.push_back(index(r));
      const uint32_t trigger = index(k);
      // A name whose dependents cannot exist cannot appear either.
      if (std::any_of(idx.begin(), idx.end(),
                      [&](uint32_t i) { return is_never(n.props[i].node); }))
        n.props[trigger].node = never();
      n.dependent.push_back({trigger, std::move(idx)});
    }
  }
  // Other keys: every part's additionalProperties (or a pattern's schema).
  std::vector<Part> other;
  for (const auto& p : parts) {
    if (auto it = p.j->find("additionalProperties"); it != p.j->end()) {
      other.push_back({&*it, p.ptr + "/additionalProperties", 0});
    }
  }
  std::vector<std::vector<Part>> pattern_parts;
  if (with_patterns) {
    for (const auto& [pat, sub] : with_patterns->j->at("patternProperties").items()) {
      std::vector<Part> ps = {
          {&sub, with_patterns->ptr + "/patternProperties/" + pointer_escape(pat), 0}};
      for (const auto& p : parts) {
        if (&p == with_patterns) continue;
        if (auto it = p.j->find("additionalProperties"); it != p.j->end()) {
          ps.push_back({&*it, p.ptr + "/additionalProperties", 0});
        }
      }
      // Validate the pattern as an ECMA regex now, with its pointer.
      (void)pattern_dfa(pat, true, with_patterns->ptr + "/patternProperties");
      pattern_parts.push_back(ps);
      n.pattern_props.push_back({pat, conj(std::move(ps), depth + 1)});
    }
    // The additional label covers keys no pattern matches: other parts'
    // additionalProperties and the pattern part's own.
  }
  const uint32_t add_node = conj(std::move(other), depth + 1);
  n.additional = is_never(add_node) ? kNoNode : add_node;
  if (n.required.size() > n.max_props || n.min_props > n.max_props) return never();
  if (n.min_props > n.props.size() && n.additional == kNoNode && n.pattern_props.empty())
    return never();
  std::vector<Part> names_parts;
  for (const auto& p : parts) {
    if (auto it = p.j->find("propertyNames"); it != p.j->end())
      names_parts.push_back({&*it, p.ptr + "/propertyNames", 0});
  }
  std::shared_ptr<const Dfa> names_dfa;
  if (!names_parts.empty()) {
    names_dfa = property_names_dfa(std::move(names_parts));
    n.names_restricted = true;
    // A declared name propertyNames refuses cannot appear.
    for (size_t i = 0; i < n.props.size(); ++i) {
      if (names_dfa->matches(json(n.props[i].name).dump())) continue;
      if (std::find(n.required.begin(), n.required.end(), i) != n.required.end()) return never();
      n.props[i].node = never();
    }
    if (n.min_props > 0 && names_dfa->empty()) return never();
  }
  n.key_dfa = key_dfa(n, names_dfa.get());
  // A key several patterns match must satisfy all their schemas: one node
  // per combination the key automaton can end in.
  const Dfa& kd = *g_.dfas[n.key_dfa];
  const auto np = static_cast<uint32_t>(n.props.size());
  for (int32_t q = 0; q < static_cast<int32_t>(kd.states()); ++q) {
    std::vector<uint32_t> combo =
        matched_patterns(kd.labels(q), np, static_cast<uint32_t>(n.pattern_props.size()));
    if (combo.size() < 2) continue;
    if (std::any_of(n.pattern_combos.begin(), n.pattern_combos.end(),
                    [&](const auto& c) { return c.first == combo; })) {
      continue;
    }
    std::vector<Part> all;
    for (uint32_t k : combo)
      all.insert(all.end(), pattern_parts[k].begin(), pattern_parts[k].end());
    n.pattern_combos.push_back({combo, conj(std::move(all), depth + 1)});
  }
  return add(std::move(n));
}

uint32_t Compiler::array_node(std::vector<Part>& parts, size_t depth) {
  GrammarNode n;
  n.kind = NodeKind::kArray;
  size_t prefix_len = 0;
  // Per part: its prefix schemas and the schema for the items after them.
  struct Shape {
    const json* prefix = nullptr;
    std::string prefix_ptr;
    const json* rest = nullptr;
    std::string rest_ptr;
  };
  std::vector<Shape> shapes;
  std::string unique_at;  // where uniqueItems: true is, if anywhere
  for (const auto& p : parts) {
    const json& j = *p.j;
    Shape s;
    if (auto it = j.find("prefixItems"); it != j.end()) {
      if (!it->is_array())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/prefixItems", "prefixItems must be an array");
      s.prefix = &*it;
      s.prefix_ptr = p.ptr + "/prefixItems";
      if (auto r = j.find("items"); r != j.end()) {
        s.rest = &*r;
        s.rest_ptr = p.ptr + "/items";
      }
    } else if (auto items = j.find("items"); items != j.end()) {
      if (items->is_array()) {  // draft 4-2019: tuple form
        s.prefix = &*items;
        s.prefix_ptr = p.ptr + "/items";
        if (auto r = j.find("additionalItems"); r != j.end()) {
          s.rest = &*r;
          s.rest_ptr = p.ptr + "/additionalItems";
        }
      } else {
        s.rest = &*items;
        s.rest_ptr = p.ptr + "/items";
      }
    }
    if (s.prefix) prefix_len = std::max(prefix_len, s.prefix->size());
    if (auto it = j.find("minItems"); it != j.end())
      n.min_items = std::max(n.min_items, count_of(*it, p.ptr + "/minItems"));
    if (auto it = j.find("maxItems"); it != j.end())
      n.max_items = std::min(n.max_items, count_of(*it, p.ptr + "/maxItems"));
    if (auto it = j.find("uniqueItems"); it != j.end() && it->is_boolean() && it->get<bool>())
      unique_at = p.ptr + "/uniqueItems";
    shapes.push_back(std::move(s));
  }
  auto item_parts = [&](size_t i) {
    std::vector<Part> out;
    for (const auto& s : shapes) {
      if (s.prefix && i < s.prefix->size()) {
        out.push_back({&(*s.prefix)[i], s.prefix_ptr + "/" + std::to_string(i), 0});
      } else if (s.rest) {
        out.push_back({s.rest, s.rest_ptr, 0});
      }
    }
    return out;
  };
  for (size_t i = 0; i < prefix_len && i < n.max_items; ++i) {
    const uint32_t v = conj(item_parts(i), depth + 1);
    if (is_never(v)) {
      n.max_items = static_cast<uint32_t>(i);
      break;
    }
    n.prefix.push_back(v);
  }
  if (n.prefix.size() == prefix_len) {
    const uint32_t r = conj(item_parts(prefix_len), depth + 1);
    n.items = is_never(r) ? kNoNode : r;
  }
  if (n.items == kNoNode)
    n.max_items = std::min<uint32_t>(n.max_items, static_cast<uint32_t>(n.prefix.size()));
  if (!unique_at.empty() && n.max_items > 1) make_unique(n, item_parts(prefix_len), unique_at);
  if (n.min_items > n.max_items) return never();
  return add(std::move(n));
}
}  // namespace

}  // namespace nextok::constraint

namespace nextok::constraint {

CompiledSchema compile_json_schema(const nlohmann::json& schema, const SchemaCompileOptions& opt,
                                   const StandardDfas& std_dfas) {
  return Compiler(schema, opt, std_dfas).run(schema);
}

Grammar any_json_grammar(bool object_only, uint8_t max_whitespace, const StandardDfas& std_dfas) {
  SchemaCompileOptions opt;
  opt.max_whitespace = max_whitespace;
  const json schema = object_only ? json{{"type", "object"}} : json(true);
  return compile_json_schema(schema, opt, std_dfas).grammar;
}

}  // namespace nextok::constraint
