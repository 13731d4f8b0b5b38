// enum, const and lists of values: their DFAs, value-only alternatives,
// and the finite value sets uniqueItems needs.
#include "constraint/schema/schema_compiler_impl.hpp"

namespace nextok::constraint::schema_detail {

// The values of a that b also lists, in a's order (JSON equality).
static json common_values(const json& a, const json& b) {
  json keep = json::array();
  for (const auto& v : a)
    if (std::find(b.begin(), b.end(), v) != b.end()) keep.push_back(v);
  return keep;
}

namespace {

// The distinct values of several lists (JSON equality: json's < compares
// numbers by value), in first-seen order, each with how many lists hold it.
struct ValueCounts {
  std::vector<json> values;
  std::vector<size_t> lists_with;
  void add(const json& list) {
    for (const auto& x : std::set<json>(list.begin(), list.end())) {
      auto [at, fresh] = index.emplace(x, values.size());
      if (fresh) {
        values.push_back(x);
        lists_with.push_back(1);
      } else {
        ++lists_with[at->second];
      }
    }
  }
  // anyOf: every value; oneOf: the values exactly one list holds.
  json merged(bool one_of) const {
    json out = json::array();
    for (size_t i = 0; i < values.size(); ++i)
      if (!one_of || lists_with[i] == 1) out.push_back(values[i]);
    return out;
  }

 private:
  std::map<json, size_t> index;  // value → its place in `values`
};

// A value's types as type() bits (an integral number is both integer and number).
unsigned value_types(const json& v) {
  if (v.is_string()) return kString;
  if (v.is_boolean()) return kBoolean;
  if (v.is_null()) return kNull;
  if (v.is_object()) return kObject;
  if (v.is_array()) return kArray;
  const bool integral =
      v.is_number_integer() || v.is_number_unsigned() ||
      v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>()));
  return integral ? (kNumber | kInteger) : kNumber;
}

}  // namespace

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
        common = common_values(common, list);
      }
      any = true;
    }
  }
  return any;
}

// anyOf of branches that only list values (enum/const and annotations) is
// the enum of their union; oneOf keeps the values exactly one branch lists.
// Distributing such branches one by one would multiply the conjunction by
// their count (an anyOf of 259 consts under a pattern: 259 conjunctions).
// In an anyOf, value-only branches merge even when others do not; a oneOf
// merges only when every branch lists values (the others could match them).
const Compiler::ValueSplit& Compiler::value_split(const json& branches, bool one_of,
                                                  const std::string& ptr) {
  if (auto it = value_splits_.find(&branches); it != value_splits_.end()) return it->second;
  ValueSplit& split = value_splits_[&branches];
  ValueCounts counts;
  size_t listing = 0;  // value-only branches
  for (size_t i = 0; i < branches.size(); ++i) {
    tick();
    const std::optional<json> mine = listed_values(branches[i], ptr + "/" + std::to_string(i));
    if (!mine) {
      if (one_of) return split;
      split.others.push_back(i);
      continue;
    }
    ++listing;
    counts.add(*mine);
  }
  // Past kMaxMergedValues, one literal automaton of them all outgrows the
  // NFA limit; one small DFA per branch, united, scales further.
  if (listing < 2 || counts.values.size() > kMaxMergedValues) {
    split.others.clear();
    return split;
  }
  json out = counts.merged(one_of);
  split.values = std::make_unique<const json>(json{{"enum", std::move(out)}});
  return split;
}

// The values a branch admits when it constrains only by listing them:
// const ∩ enum narrowed by type, through $ref, allOf (values every part
// admits), anyOf (any branch) and oneOf (exactly one branch, JSON
// equality); nullopt when some keyword constrains otherwise.
std::optional<json> Compiler::listed_values(const json& b, const std::string& ptr, size_t depth) {
  if (b.is_boolean() && !b.get<bool>()) return json::array();
  if (!b.is_object() || depth > 16) return std::nullopt;
  std::optional<json> mine;
  unsigned types = kAllTypes;
  auto narrow = [&](json list) { mine = mine ? common_values(*mine, list) : std::move(list); };
  for (const auto& item : b.items()) {
    const std::string& k = item.key();  // plain names: a lambda captures k
    const json& v = item.value();
    if (k == "enum" || k == "const") {
      if (k == "enum" && !v.is_array()) return std::nullopt;  // the plain path reports it
      narrow(k == "const" ? json::array({v}) : v);
    } else if (k == "type") {
      types &= parse_types(v, ptr + "/type");
    } else if (k == "$ref" && v.is_string()) {
      const auto [target, where] = refs_.resolve(v.get<std::string>(), &b, ptr);
      auto r = listed_values(*target, where, depth + 1);
      if (!r) return std::nullopt;
      narrow(std::move(*r));
    } else if ((k == "allOf" || k == "anyOf" || k == "oneOf") && v.is_array() && !v.empty()) {
      std::vector<json> lists;
      for (size_t i = 0; i < v.size(); ++i) {
        auto r = listed_values(v[i], ptr + "/" + k + "/" + std::to_string(i), depth + 1);
        if (!r) return std::nullopt;
        lists.push_back(std::move(*r));
      }
      json out = json::array();
      if (k == "allOf") {
        out = lists[0];
        for (size_t i = 1; i < lists.size(); ++i) out = common_values(out, lists[i]);
      } else {
        ValueCounts counts;
        for (const auto& list : lists) counts.add(list);
        out = counts.merged(k == "oneOf");
      }
      narrow(std::move(out));
    } else if (std::any_of(std::begin(kConstraining), std::end(kConstraining),
                           [&](const char* c) { return k == c; }) ||
               k == "$ref" || k == "allOf" || k == "anyOf" || k == "oneOf") {
      return std::nullopt;
    }
  }
  if (!mine) return std::nullopt;
  if (types != kAllTypes) {
    json keep = json::array();
    for (const auto& x : *mine)
      if (value_types(x) & types) keep.push_back(x);
    mine = std::move(keep);
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

std::vector<uint32_t> Compiler::enum_options(std::vector<Part>& parts, unsigned types,
                                             const json& values) {
  std::vector<std::string> strings, scalars;
  std::vector<uint32_t> options;
  for (const auto& v : values) {
    if (v.is_string()) {
      if (types & kString) strings.push_back(v.get<std::string>());
    } else if (v.is_number()) {
      const bool integral = (value_types(v) & kInteger) != 0;
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
                               "minProperties", "maxProperties", "additionalItems", "propertyNames",
                               "dependentRequired", "dependentSchemas", "dependencies"}) {
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

}  // namespace nextok::constraint::schema_detail
