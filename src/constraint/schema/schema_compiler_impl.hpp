// The JSON Schema compiler's internals: one class, its members defined in
// schema_compiler.cpp (parts, conjunctions, alternatives, strings and numbers),
// schema_values.cpp (enum, const, value lists), schema_objects.cpp (objects,
// keys, propertyNames) and schema_arrays.cpp (arrays, uniqueItems).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "constraint/engine/length_bounds.hpp"
#include "constraint/engine/machine.hpp"
#include "constraint/regex/compile_budget.hpp"
#include "constraint/schema/dfa_interner.hpp"
#include "constraint/schema/formats.hpp"
#include "constraint/schema/number_ranges.hpp"
#include "constraint/schema/one_of.hpp"
#include "constraint/schema/schema_compiler.hpp"
#include "constraint/schema/schema_drafts.hpp"
#include "constraint/schema/schema_keywords.hpp"
#include "constraint/schema/schema_not.hpp"
#include "constraint/schema/schema_refs.hpp"
#include "constraint/schema/schema_types.hpp"
#include "constraint/schema/unique_items.hpp"
#include "constraint/schema/value_check.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint::schema_detail {

using json = nlohmann::json;

// Keywords that constrain but are not enforced: strict mode rejects them.
inline constexpr const char* kUnsupported[] = {"$dynamicRef", "$recursiveRef"};

// The distinct options of an anyOf through nested anyOf (what the matcher
// forks into at its first byte).
size_t flat_option_count(const Grammar& g, const GrammarNode& n);

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
    const Draft draft = declared_draft(root);
    draft4_ = draft == Draft::k3 || draft == Draft::k4;
    value_check_ = std::make_unique<ValueCheck>(refs_, draft4_);
  }

  CompiledSchema run(const json& root);

 private:
  // --- parts and memo -----------------------------------------------------
  // kExpanded: the part's $ref and allOf are among the parts already. Without
  // it, flattening a conjunction again would add the $ref target afresh,
  // undoing which of its alternatives were distributed.
  // kNotRewritten: the part's `not` is enforced through an equivalent schema
  // (negated_schema) added as another part.
  enum : uint32_t {
    kAnyOfDone = 1,
    kOneOfDone = 2,
    kExpanded = 4,
    kIfDone = 8,
    kDepsDone = 16,
    kNotRewritten = 32,
    kUnevaluatedDone = 64  // unevaluatedProperties/Items stand as parts (add_unevaluated)
  };
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

  // Past the wall-clock budget the compile stops with an error that names
  // it; past tick_limit_ (a rewrite's own budget, counted so that whether
  // it completes does not depend on the machine's load) with one that the
  // rewrite catches.
  void tick() const {
    if (++ticks_ > tick_limit_) fail(ErrorCode::kInvalidArgument, "", "rewrite past its work");
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
    if (g_.nodes.size() == g_.nodes.capacity())  // the list about to double
      CompileBudget::charge(g_.nodes.size() * sizeof(GrammarNode) + sizeof(GrammarNode));
    g_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(g_.nodes.size() - 1);
  }

  uint32_t add_dfa(Dfa d) { return add_dfa(std::make_shared<const Dfa>(std::move(d)), false); }
  uint32_t add_dfa(std::shared_ptr<const Dfa> d, bool shared) {
    if (!shared) {
      InternedDfa x = intern_dfa(std::move(d));
      d = std::move(x.dfa);
      shared = x.shared;
      if (!shared) CompileBudget::charge(d->memory_bytes());  // held by the grammar
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

  std::shared_ptr<const LengthBounds> length_bounds(const std::shared_ptr<const Dfa>& d) {
    auto& lb = length_bounds_[d];
    if (!lb) lb = LengthBounds::shared_of(*d);
    return lb;
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
  bool flatten(std::vector<Part>& parts);

  // --- the conjunction ----------------------------------------------------
  uint32_t conj(std::vector<Part> parts, size_t depth);

  GrammarNode build(std::vector<Part>& parts, size_t depth);
  // The union of the conjunction with each case's extra parts, part k's
  // keyword marked `done`: how if/then/else and dependentSchemas become
  // alternatives.
  GrammarNode union_of_cases(const std::vector<Part>& parts, size_t k, uint32_t done,
                             const std::vector<std::vector<Part>>& extras, size_t depth);

  // One case of an if/then/else: a synthesized test and the branch it takes.
  struct Case {
    std::shared_ptr<const json> test;
    const json* branch;  // then or else; null when absent (no constraint)
    std::string keyword;
  };
  const std::vector<Case>& if_cases(const Part& p);
  // `not: s` in a form negation_of cannot enforce, as an equivalent schema
  // of forms it can (De Morgan); null when there is none.
  const json* rewritten_not(const json& s, const std::string& ptr);
  // The kSomeKeyOutside objects in `j`, a schema negated_schema built (and
  // the compiler keeps): only these are read as that keyword.
  void note_generated(const json& j);
  std::set<const json*> some_key_parts_;
  // The object node n, holding some key outside each name set: a some_key
  // mask where undeclared keys can be read, else one copy per choice of
  // the declared keys that meet the sets, each requiring its choice.
  struct Outside {
    std::vector<std::string> names, patterns;
    // Non-null: a value-conditioned set (kSomeKeyMatching): some key the
    // one pattern matches, with a value of this schema.
    const json* value = nullptr;
    std::string ptr;
  };
  // The node a claiming key's value is read as: the key's own schema (a
  // declared `prop`, else the undeclared key these labels end) and `value`.
  using ClaimedValue = std::function<uint32_t(std::span<const Outside* const> sets, uint32_t prop,
                                              std::span<const uint32_t> labels)>;
  // Most value-conditioned sets one key may claim together (2^k - k - 1
  // combined value nodes per key).
  static constexpr int kMaxJointClaims = 4;
  uint32_t with_some_key(GrammarNode n, const std::vector<Outside>& sets, const Dfa* names,
                         const ClaimedValue& claimed, const std::string& ptr);
  // Adds n.claim_combos; false (after a lenient error) past kMaxJointClaims.
  bool joint_claims(GrammarNode& n, const std::vector<const Outside*>& valued_sets,
                    const std::map<uint32_t, std::vector<uint32_t>>& claim_labels,
                    const ClaimedValue& claimed, const std::string& ptr);
  std::map<const json*, std::shared_ptr<const json>> rewritten_nots_;
  // dependentSchemas (and dependencies' schema form): one case per set of
  // triggers present, with the schemas those triggers bring in.
  struct DependentCase {
    std::shared_ptr<const json> test;  // which triggers are present, which absent
    std::vector<Part> schemas;         // the present triggers' schemas
  };
  const std::vector<DependentCase>& dependent_cases(const Part& p);
  static constexpr size_t kMaxDependentSchemas = 5;
  GrammarNode plain(std::vector<Part>& parts, size_t depth);
  // unevaluatedProperties/Items as parts over what the conjunction's parts
  // evaluate (unevaluated.cpp); called once the alternatives are distributed.
  void add_unevaluated(std::vector<Part>& parts);
  // `{"$ref": ...}` to a subschema where it is written (its $refs resolve
  // there), or a boolean schema as it is.
  json in_place(const json& schema);
  // A schema the compiler makes, one object per content (memo keys hold it).
  const json* made(json schema);
  std::map<const json*, std::string> in_place_refs_;
  std::map<const json*, const json*> if_holds_;  // a made case test -> the `if` it proves
  std::map<std::string, std::unique_ptr<const json>> made_schemas_;
  // Lexeme alternatives become one leaf (their DFAs' union), so the matcher
  // reads them as one lexeme instead of carrying a configuration per
  // alternative (which it caps, refusing the rest): always from
  // kMergeLeaves on, and below that when the union stays small.
  void merge_leaves(std::vector<uint32_t>& options);
  static constexpr size_t kMergeLeaves = 16;
  // The enforceable `not` forms of the parts (unsupported ones were reported).
  std::vector<Negation> negations(const std::vector<Part>& parts) const {
    std::vector<Negation> out;
    for (const auto& p : parts) {
      if (auto it = p.j->find("not"); it != p.j->end() && !(p.done & kNotRewritten)) {
        Negation neg = negation_of(*it, p.ptr + "/not");
        if (neg.unsupported.empty()) out.push_back(std::move(neg));
      }
    }
    return out;
  }
  static bool excluded(const std::vector<Negation>& negs, const json& v) {
    return std::any_of(negs.begin(), negs.end(), [&](const Negation& n) {
      return std::find(n.values.begin(), n.values.end(), v) != n.values.end() ||
             (n.integers && v.is_number() && is_integral(v));
    });
  }
  // d without the texts of the scalars `not` excludes (of d's kind), keeping
  // only spellings the subtraction covers; d itself when none apply.
  std::shared_ptr<const Dfa> without_excluded(std::shared_ptr<const Dfa> d, bool strings,
                                              const std::vector<Negation>& negs, bool& shared);
  std::vector<uint32_t> enum_options(std::vector<Part>& parts, unsigned types, const json& values);
  uint32_t const_node(const json& v);
  std::optional<GrammarNode> checked_values(const std::vector<Part>& parts);
  bool moved_not(const Part& p);
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
  const ValueSplit& value_split(const json& branches, bool one_of, const std::string& ptr);
  // The anyOf a oneOf of required-only branches is (one_of_keys.hpp), kept
  // per oneOf array; null when it is not of that kind.
  const json* one_of_by_required(const json& branches);
  // Per oneOf array, each branch's negation (negated_schema), for
  // oneOf = anyOf_i (B_i and not B_j for every j != i). Null when some
  // branch has no negation in those forms, or past kMaxNegatedBranches.
  static constexpr size_t kMaxNegatedBranches = 32;
  const json* one_of_negations(const json& branches, const std::string& ptr);
  // Follows a $ref written in the document (negated_schema's resolver).
  RefResolver ref_resolver() const;
  // negated_schema's context: $refs followed, subschemas referred to in
  // place, and each $ref target negated once (negated_ref).
  NegationContext negation_context();
  // {"$ref": internal} to not `target`, built on first use (a recursive
  // definition meets its own negation's $ref while that is being built).
  std::optional<json> negated_ref(const json& target, const std::string& ptr);
  static constexpr size_t kNoNegation = ~size_t{0};
  std::map<const json*, size_t> negated_refs_;          // target → internal id, or kNoNegation
  std::vector<std::unique_ptr<const json>> generated_;  // the negations built
  // The options of oneOf `branches` (distributed from parts[k]) compiled as
  // each branch beside the others' negations (`negs`, one per branch);
  // false, options unchanged, when one of them uses a form the compiler
  // cannot enforce or the rewrite runs out of its share of the budget.
  bool negated_branches(const std::vector<Part>& parts, size_t k, uint32_t bit,
                        const json& branches, const json& negs, const std::string& at, size_t depth,
                        std::vector<uint32_t>& options);
  static constexpr size_t kMaxMergedValues = 4096;
  std::optional<json> listed_values(const json& branch, const std::string& ptr, size_t depth = 0);
  std::shared_ptr<const Dfa> enum_dfa_ptr(std::vector<std::string> texts, bool strings);
  std::optional<std::vector<json>> finite_values(std::vector<Part> parts, size_t depth);
  void make_unique(GrammarNode& n, std::vector<Part> item_parts, const std::string& ptr);

  static constexpr uint32_t kStringDfa = 0, kNumberDfa = 1, kIntegerDfa = 2, kTrueDfa = 3,
                            kFalseDfa = 4, kNullDfa = 5, kStrictIntegerDfa = 6, kKeyDfa = 7;
  bool draft4_ = false;
  // Listed values checked directly; one per compile, so its compiled
  // patterns serve every list.
  std::unique_ptr<ValueCheck> value_check_;

  SchemaRefs refs_;
  SchemaCompileOptions opt_;
  const StandardDfas& sd_;
  Grammar g_;
  std::vector<std::string> warnings_;
  std::map<Key, uint32_t> memo_;
  // Per if-bearing schema, its cases (kept so recursion meets the same parts).
  std::map<const json*, std::vector<Case>> if_cases_;
  std::map<const json*, std::vector<DependentCase>> dependent_cases_;
  // Per anyOf/oneOf array: its value-only branches as one enum.
  std::map<const json*, ValueSplit> value_splits_;
  std::map<const json*, std::unique_ptr<const json>> key_one_ofs_;
  std::map<const json*, std::unique_ptr<const json>> negated_one_ofs_;
  std::map<std::vector<std::string>, std::shared_ptr<const Dfa>> enum_dfas_;
  // Length bounds by DFA (the key keeps it alive): properties that share a
  // pattern share them.
  std::map<std::shared_ptr<const Dfa>, std::shared_ptr<const LengthBounds>> length_bounds_;
  std::set<uint32_t> pending_;
  uint32_t never_ = kNoNode, any_ = kNoNode;
  size_t dfa_states_ = 0;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  mutable size_t ticks_ = 0;  // tick() calls so far
  size_t tick_limit_ = SIZE_MAX;
};

}  // namespace nextok::constraint::schema_detail
