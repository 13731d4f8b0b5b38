// JSON Schema → grammar IR. A subschema is compiled as a conjunction of
// schema objects ("parts"): $ref and allOf add parts instead of building
// merged documents, so recursion is a memo hit on the same set of parts and
// allOf needs no JSON surgery. anyOf/oneOf distribute over the other parts.
#include "constraint/schema/schema_compiler_impl.hpp"

namespace nextok::constraint::schema_detail {

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

CompiledSchema Compiler::run(const json& root) {
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

bool Compiler::flatten(std::vector<Part>& parts) {
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
    const bool dup = std::any_of(out.begin(), out.end(), [&](const Part& q) { return q.j == p.j; });
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
    if (auto it = j.find("not"); it != j.end()) {
      const Negation neg = negation_of(*it, p.ptr + "/not");
      if (neg.twice) {  // not: {not: s} is s.
        parts.push_back({&(*it)["not"], p.ptr + "/not/not", 0});
      } else if (!neg.unsupported.empty()) {
        if (const json* alt = rewritten_not(*it, p.ptr + "/not")) {
          out.back().done |= kNotRewritten;
          parts.push_back({alt, p.ptr + "/not", 0});
        }
      }
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

uint32_t Compiler::conj(std::vector<Part> parts, size_t depth) {
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
  GrammarNode built;
  try {
    built = build(parts, depth);
  } catch (const Error& e) {
    // Nodes begun since self may be unfinished or refer to it: forget them.
    std::erase_if(memo_, [&](const auto& kv) { return kv.second > self; });
    std::erase_if(pending_, [&](uint32_t n) { return n > self; });
    std::optional<GrammarNode> listed;
    if (e.code() == ErrorCode::kUnsupported) listed = checked_values(parts);
    if (!listed) {
      memo_.erase(key);
      pending_.erase(self);
      throw;
    }
    built = std::move(*listed);
  }
  g_.nodes[self] = std::move(built);
  pending_.erase(self);
  return self;
}

// The part's `not` stands as another part: rewritten, or not: {not: s}.
bool Compiler::moved_not(const Part& p) {
  if (p.done & kNotRewritten) return true;
  auto it = p.j->find("not");
  return p.done & kExpanded && it != p.j->end() && negation_of(*it, p.ptr + "/not").twice;
}

// A conjunction with enum/const is the listed values that satisfy every
// part, however the parts constrain: each value is checked against them
// directly (ValueCheck; in plain(), and where compiling the parts failed
// as unsupported), and the node is those values. nullopt when there is no
// list or a value is not decided exactly.
std::optional<GrammarNode> Compiler::checked_values(const std::vector<Part>& parts) {
  unsigned types = kAllTypes;  // unused: the check reads `type` itself
  json values;
  if (!enum_values(parts, types, values)) return std::nullopt;
  // Draft 4 spells integers without a fraction, which the value nodes below
  // do not know: its numbers keep the compiled path.
  if (draft4_ && std::any_of(values.begin(), values.end(), [](const json& v) {
        return v.is_number() || v.is_object() || v.is_array();
      })) {
    return std::nullopt;
  }
  std::vector<unsigned> skips;
  for (const auto& p : parts) {
    skips.push_back((p.done & kAnyOfDone ? ValueCheck::kSkipAnyOf : 0u) |
                    (p.done & kOneOfDone ? ValueCheck::kSkipOneOf : 0u) |
                    (p.done & kIfDone ? ValueCheck::kSkipIf : 0u) |
                    (p.done & kDepsDone ? ValueCheck::kSkipDependentSchemas : 0u) |
                    (p.done & kExpanded ? ValueCheck::kSkipRefAndAllOf : 0u) |
                    (moved_not(p) ? ValueCheck::kSkipNot : 0u));
  }
  json keep = json::array();
  for (const auto& v : values) {
    bool ok = true;
    for (size_t k = 0; k < parts.size(); ++k) {
      tick();
      const std::optional<bool> r = value_check_->holds(*parts[k].j, v, 0, skips[k]);
      if (!r) return std::nullopt;
      ok = ok && *r;
    }
    if (ok) keep.push_back(v);
  }
  std::vector<Part> none;
  std::vector<uint32_t> options = enum_options(none, kAllTypes, keep);
  std::erase_if(options, [&](uint32_t o) { return is_never(o); });
  if (options.empty()) return GrammarNode{};
  if (options.size() == 1) return g_.nodes[options[0]];
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  alt.options = std::move(options);
  return alt;
}

GrammarNode Compiler::build(std::vector<Part>& parts, size_t depth) {
  for (auto& p : parts) {
    for (const char* kw : kUnsupported) {
      if (p.j->contains(kw)) unsupported(p.ptr + "/" + kw, std::string("keyword \"") + kw + "\"");
    }
    if (auto it = p.j->find("not"); it != p.j->end() && !(p.done & kNotRewritten)) {
      const Negation neg = negation_of(*it, p.ptr + "/not");
      if (!neg.unsupported.empty()) unsupported(p.ptr + "/not", neg.unsupported);
      if (neg.everything) return {};
    }
  }
  // Schema-form dependencies: the union of their cases (which triggers are
  // present), each with the schemas its present triggers bring in.
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].done & kDepsDone) continue;
    const std::vector<DependentCase>& cases = dependent_cases(parts[k]);
    if (cases.empty()) continue;
    std::vector<std::vector<Part>> extras;
    for (const DependentCase& c : cases) {
      extras.push_back({{c.test.get(), parts[k].ptr, 0}});
      extras.back().insert(extras.back().end(), c.schemas.begin(), c.schemas.end());
    }
    return union_of_cases(parts, k, kDepsDone, extras, depth);
  }
  // if/then/else on a discriminator: the union of its cases.
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].done & kIfDone || !parts[k].j->contains("if")) continue;
    std::vector<std::vector<Part>> extras;
    for (const Case& c : if_cases(parts[k])) {
      extras.push_back({{c.test.get(), parts[k].ptr + "/if", 0}});
      if (c.branch) extras.back().push_back({c.branch, parts[k].ptr + "/" + c.keyword, 0});
    }
    return union_of_cases(parts, k, kIfDone, extras, depth);
  }
  // Alternatives distribute over the rest of the conjunction.
  for (size_t k = 0; k < parts.size(); ++k) {
    for (const auto& kw_bit : {std::pair{"anyOf", kAnyOfDone}, std::pair{"oneOf", kOneOfDone}}) {
      // Plain names, not structured bindings: lambdas below capture them.
      const char* const kw = kw_bit.first;
      const auto bit = kw_bit.second;
      if (parts[k].done & bit) continue;
      auto it = parts[k].j->find(kw);
      if (it == parts[k].j->end()) continue;
      if (!it->is_array() || it->empty()) {
        fail(ErrorCode::kInvalidArgument, parts[k].ptr + "/" + kw,
             std::string(kw) + " must be a non-empty array");
      }
      // A oneOf told apart only by required keys: the equivalent anyOf.
      if (bit == kOneOfDone) {
        if (const json* any = one_of_by_required(*it)) {
          const std::string ptr = parts[k].ptr + "/" + kw;
          parts[k].done |= bit;
          parts.push_back({any, ptr, 0});
          continue;
        }
      }
      // Branches that only list values are one enum: no distribution.
      const ValueSplit& split = value_split(*it, bit == kOneOfDone, parts[k].ptr + "/" + kw);
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
        OneOfContext oc{g_,
                        sd_,
                        pending_,
                        [&](std::shared_ptr<const Dfa> d) { return add_dfa(std::move(d), false); },
                        [&](GrammarNode n) { return add(std::move(n)); },
                        [&] { tick(); },
                        std::min<size_t>(opt_.max_dfa_states, 20000)};
        const json* negs = nullptr;
        if (auto exclusive = exclusive_branches(oc, alt.options)) {
          alt.options = std::move(*exclusive);
        } else if ((negs = one_of_negations(*it, at)) != nullptr &&
                   negated_branches(parts, k, bit, *it, *negs, at, depth, alt.options)) {
          // Each branch is now itself and no other: exclusive by construction.
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
  add_unevaluated(parts);
  return plain(parts, depth);
}

GrammarNode Compiler::union_of_cases(const std::vector<Part>& parts, size_t k, uint32_t done,
                                     const std::vector<std::vector<Part>>& extras, size_t depth) {
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  for (const auto& extra : extras) {
    std::vector<Part> sub = parts;
    sub[k].done |= done;
    sub.insert(sub.end(), extra.begin(), extra.end());
    const uint32_t o = conj(std::move(sub), depth + 1);
    if (!is_never(o)) alt.options.push_back(o);
  }
  if (alt.options.empty()) return {};
  merge_leaves(alt.options);
  if (alt.options.size() == 1) return g_.nodes[alt.options[0]];
  return alt;
}

void Compiler::merge_leaves(std::vector<uint32_t>& options) {
  std::vector<const Dfa*> dfas;
  std::vector<uint32_t> kept;
  size_t states = 0;
  for (uint32_t o : options) {
    const GrammarNode& n = g_.nodes[o];
    if (n.kind == NodeKind::kLeaf && !n.counts_chars && n.value_ids.empty() &&
        !pending_.contains(o)) {
      dfas.push_back(g_.dfas[n.dfa].get());
      states += dfas.back()->states();
    } else {
      kept.push_back(o);
    }
  }
  if (dfas.size() < 2) return;
  // Many alternatives must merge (the matcher caps configurations); a few
  // merge when their union stays small, so that a mask costs one lexeme
  // state rather than one per alternative (a cache miss each).
  const bool must = dfas.size() >= kMergeLeaves;
  const size_t cap = must ? std::min<size_t>(opt_.max_dfa_states, 50000)
                          : std::min<size_t>(opt_.max_dfa_states, 2 * states + 64);
  std::optional<Dfa> u = Dfa::try_unite(dfas, cap, [this] { tick(); });
  if (!u) {
    if (!must) return;
    fail(ErrorCode::kInvalidArgument, "pattern",
         "union needs more than " + std::to_string(cap) + " DFA states");
  }
  kept.push_back(leaf(add_dfa(std::move(*u))));
  options = std::move(kept);
}

// --- values ----------------------------------------------------------------

// if: {properties: {k: D}, required?: [k], type?: object} where `not: D` is
// enforceable (negated_schema: const, enum, type, pattern tests and their
// anyOf/allOf), or if: {required: [k]}, or if: {not: such a test} (the
// branches swapped): (if ∧ then) ∨ (¬if ∧ else) as cases. JSON Schema's
// `properties` and `required` hold for non-objects, so a non-object takes
// `then` (`else` when the test asks for an object); an object takes `then`
// when k matches D (or is absent and not required), else `else`. Any other
// test whose negation negated_schema can build: the test itself with then,
// its negation with else.
const std::vector<Compiler::Case>& Compiler::if_cases(const Part& p) {
  if (auto it = if_cases_.find(p.j); it != if_cases_.end()) return it->second;
  const json* test = &p.j->at("if");
  const json* then_ = p.j->contains("then") ? &p.j->at("then") : nullptr;
  const json* else_ = p.j->contains("else") ? &p.j->at("else") : nullptr;
  const char* then_kw = "then";
  const char* else_kw = "else";
  bool swapped = false;
  // if: {not: s} is if: s with the branches swapped.
  auto only_not = [](const json& t) {
    if (!t.is_object() || !t.contains("not")) return false;
    for (const auto& [k, v] : t.items())
      if (k != "not" && k != "title" && k != "description" && k != "$comment") return false;
    return true;
  };
  while (only_not(*test)) {
    test = &(*test)["not"];
    swapped = !swapped;
    std::swap(then_, else_);
    std::swap(then_kw, else_kw);
  }
  std::string key;
  const json* d = nullptr;
  bool required = false, shape = test->is_object(), objects_only = false;
  static const json kNothing = json::object();
  static const json kTrue = true;
  if (test->is_boolean()) {  // if: true / false picks a branch outright
    std::vector<Case> one = {{std::make_shared<const json>(json::object()),
                              test->get<bool>() ? then_ : else_,
                              test->get<bool>() ? then_kw : else_kw}};
    return if_cases_[p.j] = std::move(one);
  }
  for (const auto& [kw, v] : (shape ? *test : kNothing).items()) {
    if (kw == "properties" && v.is_object() && v.size() == 1) {
      key = v.begin().key();
      d = &v.begin().value();
    } else if (kw == "required" && v.is_array() && v.size() == 1 && v[0].is_string()) {
      required = true;
    } else if (kw == "type" && v == "object") {
      objects_only = true;  // non-objects fail the test
    } else if (kw != "title" && kw != "description" && kw != "$comment") {
      shape = false;
    }
  }
  if (shape && required) {
    if (!d) {  // if: {required: [k]}: the property's presence alone
      key = (*test)["required"][0].get<std::string>();
      d = &kTrue;
    }
    shape = (*test)["required"][0] == key;
  }
  std::optional<json> not_d;
  if (shape && d) not_d = negated_schema(*d, p.ptr + "/if/properties");
  std::vector<Case> cases;
  if (!shape || !d || !not_d) {
    // Any other test: (if ∧ then) ∨ (not-if ∧ else), the test read in place
    // (its $refs resolve where written) and its negation built as `not` is.
    const NegationContext cx = negation_context();
    if (auto n = negated_schema(*test, p.ptr + "/if", &cx)) {
      auto negated = std::make_shared<const json>(std::move(*n));
      note_generated(*negated);
      cases.push_back(
          {std::shared_ptr<const json>(std::shared_ptr<const json>{}, test), then_, then_kw});
      cases.push_back({std::move(negated), else_, else_kw});
      return if_cases_[p.j] = std::move(cases);
    }
    unsupported(p.ptr + "/if", "if with a test whose negation (for else) cannot be enforced");
    cases.push_back(
        {std::make_shared<const json>(json::object()), nullptr, "if"});  // lenient: ignored
    return if_cases_[p.j] = std::move(cases);
  }
  const json props = {{key, *d}};
  const json not_props = {{key, std::move(*not_d)}};
  auto add_case = [&](json t, const json* branch, const char* kw) {
    cases.push_back({std::make_shared<const json>(std::move(t)), branch, kw});
  };
  // `properties` and `required` hold for non-objects: they take then,
  // unless the test also asks for an object.
  if (objects_only) {
    add_case({{"not", {{"type", "object"}}}}, else_, else_kw);
  } else {
    add_case({{"not", {{"type", "object"}}}}, then_, then_kw);
  }
  json taken = {{"type", "object"}, {"properties", props}};
  if (required) taken["required"] = json::array({key});
  add_case(std::move(taken), then_, then_kw);
  // Where this case holds, so does the `if` as written: its annotations count
  // (add_unevaluated).
  if (!swapped) if_holds_[cases.back().test.get()] = &p.j->at("if");
  add_case({{"type", "object"}, {"required", json::array({key})}, {"properties", not_props}}, else_,
           else_kw);
  if (required)
    add_case({{"type", "object"}, {"not", {{"required", json::array({key})}}}}, else_, else_kw);
  return if_cases_[p.j] = std::move(cases);
}

const json* Compiler::rewritten_not(const json& s, const std::string& ptr) {
  auto [it, fresh] = rewritten_nots_.try_emplace(&s);
  if (fresh) {
    const NegationContext cx = negation_context();
    if (auto alt = negated_schema(s, ptr, &cx)) {
      it->second = std::make_shared<const json>(std::move(*alt));
      note_generated(*it->second);
    }
  }
  return it->second.get();
}

void Compiler::note_generated(const json& j) {
  if (j.is_object()) {
    if (j.contains(kSomeKeyOutside) || j.contains(kSomeKeyMatching)) some_key_parts_.insert(&j);
    for (const auto& [k, v] : j.items()) note_generated(v);
  } else if (j.is_array()) {
    for (const auto& v : j) note_generated(v);
  }
}

// A value satisfies `dependentSchemas: {t: S}` when it is not an object, or
// is an object without t, or satisfies S. With triggers T, the cases are the
// subsets P of T present: P empty takes non-objects and objects without any
// trigger; otherwise an object with exactly P of T, and each schema of P.
// The cases are disjoint by which triggers are present.
const std::vector<Compiler::DependentCase>& Compiler::dependent_cases(const Part& p) {
  if (auto it = dependent_cases_.find(p.j); it != dependent_cases_.end()) return it->second;
  std::vector<std::pair<std::string, Part>> triggers;
  for (const char* kw : {"dependentSchemas", "dependencies"}) {
    auto it = p.j->find(kw);
    if (it == p.j->end()) continue;
    if (!it->is_object()) {
      fail(ErrorCode::kInvalidArgument, p.ptr + "/" + kw, std::string(kw) + " must be an object");
    }
    for (const auto& [name, v] : it->items()) {
      if (v.is_array() && std::string_view(kw) == "dependencies") continue;  // dependentRequired
      if (v.is_boolean() && v.get<bool>()) continue;                         // no constraint
      if (!v.is_object() && !v.is_boolean()) {
        fail(ErrorCode::kInvalidArgument, p.ptr + "/" + kw + "/" + pointer_escape(name),
             "a dependent schema must be an object or a boolean");
      }
      triggers.push_back({name, {&v, p.ptr + "/" + kw + "/" + pointer_escape(name), 0}});
    }
  }
  std::vector<DependentCase> cases;
  if (triggers.size() > kMaxDependentSchemas) {
    unsupported(p.ptr + "/dependentSchemas",
                "more than " + std::to_string(kMaxDependentSchemas) + " dependent schemas");
    return dependent_cases_[p.j] = std::move(cases);  // lenient: ignored
  }
  for (size_t present = 0; !triggers.empty() && present < (size_t{1} << triggers.size());
       ++present) {
    json test = json::object();
    json absent = json::object(), required = json::array();
    DependentCase c;
    for (size_t t = 0; t < triggers.size(); ++t) {
      if (present >> t & 1) {
        required.push_back(triggers[t].first);
        c.schemas.push_back(triggers[t].second);
      } else {
        absent[triggers[t].first] = false;
      }
    }
    if (!absent.empty()) test["properties"] = std::move(absent);
    if (present) {
      test["type"] = "object";
      test["required"] = std::move(required);
    }
    c.test = std::make_shared<const json>(std::move(test));
    cases.push_back(std::move(c));
  }
  return dependent_cases_[p.j] = std::move(cases);
}

GrammarNode Compiler::plain(std::vector<Part>& parts, size_t depth) {
  // A part added after flattening (a rewritten alternative) may be `false`.
  if (std::any_of(parts.begin(), parts.end(),
                  [](const Part& p) { return p.j->is_boolean() && !p.j->get<bool>(); }))
    return {};
  unsigned types = kAllTypes;
  json common;  // the intersection of several enum/const lists
  const json* values = enum_values(parts, types, common) ? &common : nullptr;
  const std::vector<Negation> negs = negations(parts);
  for (const auto& n : negs) types &= ~n.types;
  if (types & kInteger && types & kNumber) types &= ~kInteger;  // integer ⊂ number
  std::vector<uint32_t> options;
  // Listed values checked against every part directly, where each verdict
  // is exact: whatever the parts hold (not: {pattern}, object keywords, ...).
  if (values) {
    if (auto checked = checked_values(parts)) return std::move(*checked);
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
      } else if (format_without_syntax(it->get<std::string>())) {
        // Nothing to check: a description of the content, not its spelling.
      } else if (!format_is_standard(it->get<std::string>())) {
        // No draft defines it, so no validator checks it: an annotation.
        warnings_.push_back(p.ptr + "/format: \"" + it->get<std::string>() +
                            "\" is not a standard format; not checked");
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
  std::shared_ptr<const LengthBounds> lb;
  if (d && (min_chars > 0 || max_chars != kUnbounded)) {
    // The pattern and the lengths together may admit no string at all.
    lb = length_bounds(d);
    const int32_t open = d->next(d->start(), '"');
    if (open < 0 || lb->min_at(open, 0) > max_chars ||
        (lb->max_at(open, 0) != kUnbounded && lb->max_at(open, 0) < min_chars)) {
      return never();
    }
  }
  GrammarNode n;
  n.kind = NodeKind::kLeaf;
  n.dfa = d ? add_dfa(std::move(d), shared) : kStringDfa;
  if (lb) {
    g_.lengths.resize(g_.dfas.size());
    g_.lengths[n.dfa] = std::move(lb);
  }
  n.counts_chars = min_chars > 0 || max_chars != kUnbounded;
  n.min_chars = min_chars;
  n.max_chars = max_chars;
  return add(std::move(n));
}

uint32_t Compiler::number_node(std::vector<Part>& parts, bool integer) {
  NumberBounds b;
  bool bounded = false;
  for (const auto& p : parts) bounded |= b.add(*p.j, p.ptr);
  RegexOptions ro;
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  // Each multipleOf's automaton (several: all of them), then each negated
  // one's: plain decimals less m's multiples (exactly).
  std::vector<Dfa> multiples;
  for (const auto& p : parts) {
    auto it = p.j->find("multipleOf");
    if (it == p.j->end()) continue;
    if (!it->is_number() || it->get<double>() <= 0) {
      fail(ErrorCode::kInvalidArgument, p.ptr + "/multipleOf", "multipleOf must be a number > 0");
    }
    if (auto re = multiple_of_regex(*it, integer)) {
      multiples.push_back(Dfa::compile(*re, ro));
    } else if (auto md = multiple_of_dfa(*it)) {
      multiples.push_back(std::move(*md));
    } else {
      unsupported(p.ptr + "/multipleOf", "multipleOf " + it->dump());
    }
  }
  const std::vector<Negation> negs = negations(parts);
  for (const auto& n : negs) {
    for (const json& m : n.multiples) {
      auto md = plain_multiples_dfa(m);
      if (!md) {
        unsupported(n.ptr, "not: {multipleOf: " + m.dump() + "}");
        continue;
      }
      multiples.push_back(Dfa::subtract(plain_decimals(), *md, opt_.max_dfa_states));
    }
  }
  const bool excludes = std::any_of(negs.begin(), negs.end(), [](const Negation& n) {
    return std::any_of(n.values.begin(), n.values.end(),
                       [](const json& v) { return v.is_number(); });
  });
  const bool fractions =
      std::any_of(negs.begin(), negs.end(), [](const Negation& n) { return n.integers; });
  if (fractions && integer) return never();
  if (!bounded && multiples.empty() && !excludes && !fractions)
    return leaf(integer ? (draft4_ ? kStrictIntegerDfa : kIntegerDfa) : kNumberDfa);
  std::string re = integer ? kIntegerRegexText : kNumberRegex;
  if (bounded) {
    auto range = number_range_regex(b.lo, b.hi, integer);
    if (!range) return never();
    re = *range;
  }
  InternedDfa x = intern_dfa("n:" + re, [&] { return Dfa::compile(re, ro); });
  std::shared_ptr<const Dfa> d = x.dfa;
  for (const Dfa& md : multiples) {
    d = std::make_shared<const Dfa>(Dfa::intersect(*d, md, ro.max_states));
    x.shared = false;
  }
  if (integer && draft4_) {
    d = std::make_shared<const Dfa>(Dfa::intersect(*d, *sd_.integer_strict, ro.max_states));
    x.shared = false;
  }
  if (fractions) {
    d = std::make_shared<const Dfa>(
        Dfa::intersect(*d, Dfa::compile(kFractionRegex, ro), ro.max_states));
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
  std::vector<std::pair<std::string, std::string>> patterns;  // (pattern, pointer)
  for (const auto& n : negs) {
    if (strings) {
      for (const auto& p : n.patterns) patterns.emplace_back(p, n.ptr + "/pattern");
    }
    for (const auto& v : n.values) {
      if (strings && v.is_string()) texts.push_back(v.get<std::string>());
      if (!strings && v.is_number()) {
        const double x = v.get<double>();
        texts.push_back(number_spellings(v, x == std::floor(x)));
      }
    }
  }
  if (texts.empty() && patterns.empty()) return d;
  RegexOptions ro;
  ro.json_string = strings;
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  // Keep only spellings whose every variant the excluded DFAs list (see
  // one_of.hpp): an excluded value then loses all its spellings.
  const Dfa& plain = strings ? plain_spelled_strings() : plain_decimals();
  shared = false;
  Dfa rest = Dfa::intersect(*d, plain, ro.max_states);
  if (!texts.empty()) {
    std::vector<RegexAlternative> alts;
    for (const auto& t : texts) alts.push_back({t, strings});
    rest = Dfa::subtract(rest, Dfa::compile_labeled(alts, ro), ro.max_states);
  }
  for (const auto& [p, ptr] : patterns) {
    try {
      rest = Dfa::subtract(rest, *pattern_dfa(p, true, ptr).dfa, ro.max_states);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnsupported || opt_.strict) throw;
      warnings_.push_back(ptr + ": " + e.what() + "; ignored");
    }
  }
  return std::make_shared<const Dfa>(std::move(rest));
}

}  // namespace nextok::constraint::schema_detail

namespace nextok::constraint {

CompiledSchema compile_json_schema(const nlohmann::json& schema, const SchemaCompileOptions& opt,
                                   const StandardDfas& std_dfas) {
  // Keywords the declared draft lacks are annotations (error pointers stay:
  // only keys are removed).
  if (std::optional<nlohmann::json> known = without_undefined_keywords(schema))
    return schema_detail::Compiler(*known, opt, std_dfas).run(*known);
  return schema_detail::Compiler(schema, opt, std_dfas).run(schema);
}

Grammar any_json_grammar(bool object_only, uint8_t max_whitespace, const StandardDfas& std_dfas) {
  SchemaCompileOptions opt;
  opt.max_whitespace = max_whitespace;
  using nlohmann::json;
  const json schema = object_only ? json{{"type", "object"}} : json(true);
  return compile_json_schema(schema, opt, std_dfas).grammar;
}

}  // namespace nextok::constraint
