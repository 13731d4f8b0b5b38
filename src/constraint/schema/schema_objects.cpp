// Objects: properties, required, patterns, additional keys, propertyNames,
// dependencies and the key automaton.
#include "constraint/schema/one_of_keys.hpp"
#include "constraint/schema/schema_compiler_impl.hpp"
#include "constraint/schema/schema_not.hpp"

namespace nextok::constraint::schema_detail {

// A negated oneOf rewrite's ticks per ms of max_compile_ms (160,000 by
// default). Random overlapping oneOfs take up to 1,300 ticks, the dearest
// public MaskBench schema 16,800; a tick costs 1.5 to 40 µs in these
// rewrites, so only rewrites of dear ticks meet the time cap first.
constexpr size_t kRewriteTicksPerMs = 80;

const json* Compiler::one_of_by_required(const json& branches) {
  auto [it, fresh] = key_one_ofs_.try_emplace(&branches);
  if (fresh) {
    if (auto any = constraint::one_of_by_required(branches))
      it->second = std::make_unique<const json>(std::move(*any));
  }
  return it->second.get();
}

RefResolver Compiler::ref_resolver() const {
  return [this](const json& holder) -> const json* {
    const auto& ref = holder["$ref"];
    if (!ref.is_string()) return nullptr;
    try {
      return refs_.resolve(ref.get<std::string>(), &holder, "").first;
    } catch (const Error&) {
      return nullptr;  // the caller reports the form as unsupported
    }
  };
}

NegationContext Compiler::negation_context() {
  NegationContext cx;
  cx.resolve = ref_resolver();
  cx.refer = [this](const json& original) { return in_place(original); };
  cx.negated = [this](const json& target, const std::string& ptr) {
    return negated_ref(target, ptr);
  };
  return cx;
}

std::optional<json> Compiler::negated_ref(const json& target, const std::string& ptr) {
  tick();
  if (auto it = negated_refs_.find(&target); it != negated_refs_.end()) {
    if (it->second == kNoNegation) return std::nullopt;
    return json{{"$ref", SchemaRefs::internal_ref(it->second)}};
  }
  const size_t id = refs_.add_internal(nullptr);  // filled once built
  negated_refs_[&target] = id;
  const NegationContext cx = negation_context();
  auto n = negated_schema(target, ptr, &cx);
  if (!n) {
    // Negations built meanwhile may refer to this one: theirs resolve to
    // an unsupported error.
    negated_refs_[&target] = kNoNegation;
    return std::nullopt;
  }
  CompileBudget::charge(n->dump().size());
  generated_.push_back(std::make_unique<const json>(std::move(*n)));
  note_generated(*generated_.back());
  refs_.set_internal(id, generated_.back().get());
  return json{{"$ref", SchemaRefs::internal_ref(id)}};
}

const json* Compiler::one_of_negations(const json& branches, const std::string& ptr) {
  auto [it, fresh] = negated_one_ofs_.try_emplace(&branches);
  if (!fresh) return it->second.get();
  // Branch i is compiled beside the n - 1 others' negations, each an anyOf:
  // past a few dozen branches that product is hopeless within any budget.
  if (branches.size() > kMaxNegatedBranches) return nullptr;
  const NegationContext cx = negation_context();
  json negs = json::array();
  for (size_t i = 0; i < branches.size(); ++i) {
    tick();
    auto n = negated_schema(branches[i], ptr + "/" + std::to_string(i), &cx);
    if (!n) return nullptr;
    negs.push_back(std::move(*n));
  }
  it->second = std::make_unique<const json>(std::move(negs));
  note_generated(*it->second);
  return it->second.get();
}

bool Compiler::negated_branches(const std::vector<Part>& parts, size_t k, uint32_t bit,
                                const json& branches, const json& negs, const std::string& at,
                                size_t depth, std::vector<uint32_t>& options) {
  std::vector<uint32_t> out;
  // The rewrite may distribute into many cases: it gets a counted share of
  // the compile (ticks: the same schema should compile to the same grammar
  // on a loaded machine), half of the grammar nodes left, and, a safety net
  // for rewrites whose ticks are dear, a quarter of the time left. Running
  // out of any means "not enforceable", not a failed compile.
  const size_t whole = tick_limit_;
  if (opt_.max_compile_ms > 0) {
    tick_limit_ = std::min(whole, ticks_ + size_t{opt_.max_compile_ms} * kRewriteTicksPerMs);
  }
  const auto whole_time = deadline_;
  const auto now = std::chrono::steady_clock::now();
  deadline_ = now + (whole_time - now) / 4;
  const size_t all_nodes = opt_.max_nodes;
  opt_.max_nodes = g_.nodes.size() + (all_nodes - std::min(all_nodes, g_.nodes.size())) / 2;
  try {
    for (size_t i = 0; i < branches.size(); ++i) {
      std::vector<Part> sub = parts;
      sub[k].done |= bit;
      const std::string ptr = at + "/" + std::to_string(i);
      sub.push_back({&branches[i], ptr, 0});
      for (size_t j = 0; j < negs.size(); ++j)
        if (j != i) sub.push_back({&negs[j], at + "/" + std::to_string(j), 0});
      const uint32_t o = conj(std::move(sub), depth + 1);
      if (!is_never(o)) out.push_back(o);
    }
  } catch (const Error& e) {
    const bool own_budget = ticks_ > tick_limit_ || g_.nodes.size() >= opt_.max_nodes ||
                            std::chrono::steady_clock::now() > deadline_;
    tick_limit_ = whole;
    deadline_ = whole_time;
    opt_.max_nodes = all_nodes;
    if (e.code() == ErrorCode::kUnsupported || own_budget) return false;
    throw;
  }
  tick_limit_ = whole;
  deadline_ = whole_time;
  opt_.max_nodes = all_nodes;
  options = std::move(out);
  return true;
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
    for (const auto& item : p.j->items()) {
      const std::string& k = item.key();  // a plain name: the lambdas capture it
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
  if (n.props.empty() && n.pattern_props.empty() && n.key_markers.empty() &&
      n.additional != kNoNode)
    return kStringDfa;
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
  for (const auto& m : n.key_markers) {  // labels only (GrammarNode::key_markers)
    alts.push_back({m, false, false});
    alts.push_back({m, false, true});
  }
  RegexOptions ro;
  ro.json_string = true;
  ro.canonical_escapes = true;
  ro.full_match = false;  // patterns search; literals are always whole
  ro.max_states = std::min<size_t>(opt_.max_dfa_states, 20000);
  if (alts.empty()) return add_dfa(Dfa{});
  // Interned by its alternatives: objects with the same names (tool calls'
  // {name, arguments}, repeated definitions) share one automaton, built once
  // per process, and its mask entries.
  std::string key = "k:" + std::to_string(ro.max_states);
  for (const auto& a : alts) {
    key += a.literal ? 'l' : (a.unicode_classes ? 'u' : 'p');
    key += std::to_string(a.text.size()) + ":";
    key.append(a.text);
  }
  // "[^]*" with search semantics is still every string.
  InternedDfa x = intern_dfa(key, [&] { return Dfa::compile_labeled(alts, ro); });
  return add_dfa(std::move(x.dfa), x.shared);
}

uint32_t Compiler::object_node(std::vector<Part>& parts, size_t depth) {
  GrammarNode n;
  n.kind = NodeKind::kObject;
  // Declared names, in order of first appearance; required ones first so
  // that they fit the matcher's 64-bit seen set.
  std::vector<std::string> names, required;
  // dependentRequired (and dependencies' array form): name → names it needs.
  std::vector<std::pair<std::string, std::vector<std::string>>> needs;
  auto declare = [&](const std::string& k) {
    if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  };
  const std::vector<Negation> negs = negations(parts);
  // Name sets the object must hold some key outside of (negated closed
  // objects); their part declares the names.
  std::vector<Outside> outside;
  for (const auto& p : parts) {
    if (!some_key_parts_.contains(p.j)) continue;
    Outside& o = outside.emplace_back();
    o.ptr = p.ptr;
    if (auto it = p.j->find(kSomeKeyMatching); it != p.j->end()) {
      o.patterns.push_back((*it)["pattern"].get<std::string>());
      o.value = &(*it)["value"];
      continue;
    }
    for (const auto& k : p.j->at(kSomeKeyOutside)) o.names.push_back(k.get<std::string>());
    if (auto it = p.j->find(kSomeKeyOutsidePatterns); it != p.j->end())
      for (const auto& k : *it) o.patterns.push_back(k.get<std::string>());
  }
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
        if (!v.is_array()) continue;  // a schema: its cases are built in build()
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
  // Every part's patterns; a key's value takes, per part, the schemas of
  // the part's patterns it matches, else the part's additionalProperties.
  std::vector<Part> pattern_schema;
  std::vector<std::string> pattern_text;
  std::vector<size_t> pattern_owner;  // the part a pattern is from
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    auto it = p.j->find("patternProperties");
    if (it == p.j->end()) continue;
    for (const auto& [pat, sub] : it->items()) {
      // Validate the pattern as an ECMA regex now, with its pointer.
      (void)pattern_dfa(pat, true, p.ptr + "/patternProperties");
      pattern_schema.push_back({&sub, p.ptr + "/patternProperties/" + pointer_escape(pat), 0});
      pattern_text.push_back(pat);
      pattern_owner.push_back(i);
    }
  }
  auto pattern_value_parts = [&](std::span<const uint32_t> matched) {
    std::vector<Part> out;
    for (size_t i = 0; i < parts.size(); ++i) {
      bool any = false;
      for (uint32_t k : matched) {
        if (pattern_owner[k] != i) continue;
        out.push_back(pattern_schema[k]);
        any = true;
      }
      if (any) continue;
      if (auto it = parts[i].j->find("additionalProperties"); it != parts[i].j->end())
        out.push_back({&*it, parts[i].ptr + "/additionalProperties", 0});
    }
    return out;
  };
  for (uint32_t k = 0; k < pattern_schema.size(); ++k) {
    const uint32_t one[] = {k};
    n.pattern_props.push_back({pattern_text[k], conj(pattern_value_parts(one), depth + 1)});
  }
  // The additional label covers keys no pattern matches: every part's
  // additionalProperties.
  const std::vector<Part> other_parts = other;  // for claimed values
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
    n.pattern_combos.push_back({combo, conj(pattern_value_parts(combo), depth + 1)});
  }
  if (outside.empty()) return add(std::move(n));
  const auto npp = static_cast<uint32_t>(n.pattern_props.size());
  const ClaimedValue claimed = [&](std::span<const Outside* const> claims, uint32_t prop,
                                   std::span<const uint32_t> labels) {
    std::vector<Part> sub;
    if (prop != kNoNode) {
      schemas_for(names[prop], sub);
    } else {
      const std::vector<uint32_t> hit =
          matched_patterns(labels, static_cast<uint32_t>(names.size()), npp);
      sub = hit.empty() ? other_parts : pattern_value_parts(hit);
    }
    for (const Outside* set : claims)
      sub.push_back({set->value, set->ptr + "/" + kSomeKeyMatching, 0});
    return conj(std::move(sub), depth + 1);
  };
  return with_some_key(std::move(n), outside, names_dfa.get(), claimed, parts[0].ptr);
}

// A key that several value-conditioned sets can claim may claim them at
// once ({"b": 9} meets "some key matching b$ is no object" and "some key
// matching b$ is not 2" alike): one combined value node per combination.
bool Compiler::joint_claims(GrammarNode& n, const std::vector<const Outside*>& valued_sets,
                            const std::map<uint32_t, std::vector<uint32_t>>& claim_labels,
                            const ClaimedValue& claimed, const std::string& ptr) {
  // Per claiming key (declared property, or undeclared value node): its sets.
  std::map<std::pair<uint32_t, uint32_t>, uint8_t> keys;
  for (const auto& c : n.key_claims) keys[{c.prop, c.value}] |= static_cast<uint8_t>(1U << c.set);
  for (const auto& [key, sets] : keys) {
    const int k = std::popcount(sets);
    if (k < 2) continue;
    if (k > kMaxJointClaims) {
      unsupported(ptr, "one key claiming more than " + std::to_string(kMaxJointClaims) +
                           " negated patternProperties");
      return false;
    }
    const uint32_t prop = key.first, value = key.second;  // plain names: lambdas capture them
    std::span<const uint32_t> labels;
    if (prop == kNoNode) labels = claim_labels.at(value);
    for (unsigned sub = sets; sub != 0; sub = (sub - 1) & sets) {
      if (std::popcount(sub) < 2) continue;
      std::vector<const Outside*> together;
      for (unsigned e = 0; e < 8; ++e)
        if (((sub >> e) & 1U) != 0) together.push_back(valued_sets[e]);
      const uint32_t w = claimed(together, prop, labels);
      if (is_never(w)) continue;
      const bool known = std::any_of(n.claim_combos.begin(), n.claim_combos.end(),
                                     [&](auto& c) { return c.sets == sub && c.value == value; });
      if (!known) n.claim_combos.push_back({static_cast<uint8_t>(sub), value, w});
    }
  }
  return true;
}

uint32_t Compiler::with_some_key(GrammarNode n, const std::vector<Outside>& sets, const Dfa* names,
                                 const ClaimedValue& claimed, const std::string& ptr) {
  const size_t np = n.props.size();
  if (np + sets.size() > 63) {
    unsupported(ptr, "a negated closed object beside more than 63 property names");
    return add(std::move(n));  // lenient: the keys are not required
  }
  const auto exists = [&](uint32_t v) { return !is_never(v); };
  // Can a key that names no declared property be read, with a value? Then
  // the sets' patterns become key markers: which undeclared keys they match
  // is the key automaton's to tell.
  const bool undeclared = undeclared_key_possible(*g_.dfas[n.key_dfa], n, {}, exists);
  if (undeclared) {
    for (const auto& set : sets)
      for (const auto& p : set.patterns)
        if (std::find(n.key_markers.begin(), n.key_markers.end(), p) == n.key_markers.end())
          n.key_markers.push_back(p);
    if (!n.key_markers.empty()) {
      n.marker_label = static_cast<uint32_t>(np + 2 * n.pattern_props.size() +
                                             (n.additional != kNoNode ? 1 : 0));
      // The same keys (markers only label them), the markers' labels too.
      const uint32_t plain = n.key_dfa, marked = key_dfa(n, names);
      n.key_dfa = add_dfa(Dfa::restrict(*g_.dfas[marked], *g_.dfas[plain], opt_.max_dfa_states));
    }
  }
  uint64_t required = 0;
  for (uint32_t r : n.required) required |= uint64_t{1} << r;
  std::vector<uint64_t> masks;                             // met by declared names only
  std::vector<const Outside*> valued_sets;                 // per value-conditioned set
  std::map<uint32_t, std::vector<uint32_t>> claim_labels;  // undeclared value node → labels
  for (const auto& set : sets) {
    std::vector<Dfa> patterns;
    std::vector<uint32_t> markers;
    for (const auto& pat : set.patterns) {
      RegexOptions ro;  // as schemas_for reads a name against a pattern
      ro.full_match = false;
      ro.unicode_classes = true;
      patterns.push_back(Dfa::compile(pat, ro));
      const auto at = std::find(n.key_markers.begin(), n.key_markers.end(), pat);
      if (at != n.key_markers.end())
        markers.push_back(static_cast<uint32_t>(at - n.key_markers.begin()));
    }
    uint64_t m = 0;
    for (size_t i = 0; i < np; ++i) {
      const std::string& name = n.props[i].name;
      const bool inside = std::find(set.names.begin(), set.names.end(), name) != set.names.end() ||
                          std::any_of(patterns.begin(), patterns.end(),
                                      [&](const Dfa& d) { return d.matches(name); });
      if (!inside && !is_never(n.props[i].node)) m |= uint64_t{1} << i;
    }
    if (set.value != nullptr) {
      // Value-conditioned: the keys the pattern matches, each with its
      // value read as the set's schema too (a claim).
      const auto e = static_cast<uint32_t>(n.some_key.size());
      if (e >= 8) {
        unsupported(ptr, "more than 8 negated patternProperties on one object");
        return add(std::move(n));
      }
      bool any = false;
      for (size_t i = 0; i < np; ++i) {
        if (!patterns[0].matches(n.props[i].name) || is_never(n.props[i].node)) continue;
        const Outside* one[] = {&set};
        const uint32_t w = claimed(one, static_cast<uint32_t>(i), {});
        if (is_never(w)) continue;
        n.key_claims.push_back({e, static_cast<uint32_t>(i), n.props[i].node, w});
        any = true;
      }
      const Dfa& keys = *g_.dfas[n.key_dfa];
      for (size_t q = 0; q < keys.states() && undeclared && !markers.empty(); ++q) {
        const auto labels = keys.labels(static_cast<int32_t>(q));
        if (labels.empty() || !matches_marker_both(n, labels, markers[0]) ||
            std::any_of(labels.begin(), labels.end(), [&](uint32_t l) { return l < np; }))
          continue;
        const uint32_t v = undeclared_key_value(n, labels);
        if (v == kNoNode || is_never(v)) continue;
        const bool known = std::any_of(
            n.key_claims.begin(), n.key_claims.end(),
            [&](const auto& c) { return c.set == e && c.prop == kNoNode && c.value == v; });
        if (known) continue;
        const Outside* one[] = {&set};
        const uint32_t w = claimed(one, kNoNode, labels);
        if (is_never(w)) continue;
        n.key_claims.push_back({e, kNoNode, v, w});
        claim_labels.try_emplace(v, labels.begin(), labels.end());
        any = true;
      }
      if (!any) return never();
      valued_sets.resize(e + 1, nullptr);
      valued_sets[e] = &set;
      n.some_key.push_back(some_key_bit(e));
      n.some_key_markers.push_back(std::move(markers));
      n.some_key_valued.resize(e + 1, 0);
      n.some_key_valued[e] = 1;
      continue;
    }
    if ((m & required) != 0) continue;  // a required key meets it already
    if (undeclared && undeclared_key_possible(*g_.dfas[n.key_dfa], n, markers, exists)) {
      n.some_key.push_back(m | some_key_bit(n.some_key.size()));
      n.some_key_markers.push_back(std::move(markers));
      n.some_key_valued.resize(n.some_key.size(), 0);
    } else if (m == 0) {
      return never();
    } else {
      masks.push_back(m);
    }
  }
  if (!joint_claims(n, valued_sets, claim_labels, claimed, ptr)) return add(std::move(n));
  if (masks.empty()) return add(std::move(n));
  // Only declared keys meet the masks: one object per choice of a key for
  // each mask, that key required (with what it brings in).
  std::vector<uint64_t> choices = {required};
  for (uint64_t m : masks) {
    std::vector<uint64_t> next;
    for (uint64_t c : choices) {
      if (c & m) {
        next.push_back(c);
        continue;
      }
      for (size_t i = 0; i < np; ++i)
        if ((m >> i) & 1U) next.push_back(c | (uint64_t{1} << i));
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (next.size() > 64) {
      unsupported(ptr, "a negated closed object with more than 64 ways to hold its keys");
      return add(std::move(n));
    }
    choices = std::move(next);
  }
  std::vector<uint32_t> options;
  for (uint64_t c : choices) {
    for (bool grew = true; grew;) {  // dependents of required names are required
      grew = false;
      for (const auto& [trigger, needs] : n.dependent) {
        if (((c >> trigger) & 1U) == 0) continue;
        for (uint32_t r : needs) {
          grew |= ((c >> r) & 1U) == 0;
          c |= uint64_t{1} << r;
        }
      }
    }
    if (static_cast<uint32_t>(std::popcount(c)) > n.max_props) continue;
    const bool complete_forbidden =
        std::any_of(n.forbidden.begin(), n.forbidden.end(), [&](const auto& f) {
          return std::all_of(f.begin(), f.end(), [&](uint32_t i) { return ((c >> i) & 1U) != 0; });
        });
    if (complete_forbidden) continue;
    GrammarNode x = n;
    x.required.clear();
    bool possible = true;
    for (size_t i = 0; i < np; ++i) {
      if (((c >> i) & 1U) == 0) continue;
      x.required.push_back(static_cast<uint32_t>(i));
      possible &= !is_never(n.props[i].node);
    }
    if (possible) options.push_back(add(std::move(x)));
  }
  if (options.empty()) return never();
  if (options.size() == 1) return options[0];
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  alt.options = std::move(options);
  return add(std::move(alt));
}

}  // namespace nextok::constraint::schema_detail
