// Objects: properties, required, patterns, additional keys, propertyNames,
// dependencies and the key automaton.
#include "constraint/schema/one_of_keys.hpp"
#include "constraint/schema/schema_compiler_impl.hpp"
#include "constraint/schema/schema_not.hpp"

namespace nextok::constraint::schema_detail {

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

const json* Compiler::one_of_negations(const json& branches, const std::string& ptr) {
  auto [it, fresh] = negated_one_ofs_.try_emplace(&branches);
  if (!fresh) return it->second.get();
  // Branch i is compiled beside the n - 1 others' negations, each an anyOf:
  // past a few dozen branches that product is hopeless within any budget.
  if (branches.size() > kMaxNegatedBranches) return nullptr;
  const RefResolver resolve = ref_resolver();
  json negs = json::array();
  for (size_t i = 0; i < branches.size(); ++i) {
    tick();
    auto n = negated_schema(branches[i], ptr + "/" + std::to_string(i), &resolve);
    if (!n) return nullptr;
    negs.push_back(std::move(*n));
  }
  it->second = std::make_unique<const json>(std::move(negs));
  return it->second.get();
}

bool Compiler::negated_branches(const std::vector<Part>& parts, size_t k, uint32_t bit,
                                const json& branches, const json& negs, const std::string& at,
                                size_t depth, std::vector<uint32_t>& options) {
  std::vector<uint32_t> out;
  // The rewrite may distribute into many cases: it gets a quarter of the
  // time left and half of the grammar nodes left, and running out of either
  // means "not enforceable", not a failed compile.
  const auto whole = deadline_;
  const auto now = std::chrono::steady_clock::now();
  deadline_ = now + (whole - now) / 4;
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
    const bool own_budget =
        std::chrono::steady_clock::now() > deadline_ || g_.nodes.size() >= opt_.max_nodes;
    deadline_ = whole;
    opt_.max_nodes = all_nodes;
    if (e.code() == ErrorCode::kUnsupported || own_budget) return false;
    throw;
  }
  deadline_ = whole;
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

}  // namespace nextok::constraint::schema_detail
