#include "constraint/schema/one_of.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "constraint/schema/schema_types.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

namespace {

// Leaf, object and array options of a node through nested anyOf; false when
// a node is still being compiled (its shape is not known yet).
bool flatten(const OneOfContext& c, uint32_t node, std::vector<uint32_t>& out, int depth) {
  if (c.pending.contains(node) || depth > 64) return false;
  const GrammarNode& n = c.g.nodes[node];
  if (n.kind == NodeKind::kAnyOf) {
    for (uint32_t o : n.options)
      if (!flatten(c, o, out, depth + 1)) return false;
  } else if (n.kind != NodeKind::kNever && std::find(out.begin(), out.end(), node) == out.end()) {
    out.push_back(node);
  }
  return true;
}

}  // namespace

const Dfa& plain_spelled_strings() {
  static const Dfa d = [] {
    RegexOptions o;
    o.json_string = true;
    return Dfa::compile("(?:[^a]|a)*", o);
  }();
  return d;
}

const Dfa& plain_decimals() {
  static const Dfa d = Dfa::compile(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?)");
  return d;
}

namespace {

// The JSON types a leaf DFA's texts start as: kTextString, kTextNumber,
// kTextLiteral (true, false, null), kTextOther for anything else.
enum : unsigned { kTextString = 1, kTextNumber = 2, kTextLiteral = 4, kTextOther = 8 };
unsigned text_types(const Dfa& d) {
  unsigned t = 0;
  for (int x = 0; x < 256; ++x) {
    if (d.next(d.start(), static_cast<uint8_t>(x)) < 0) continue;
    if (x == '"') {
      t |= kTextString;
    } else if (x == '-' || (x >= '0' && x <= '9')) {
      t |= kTextNumber;
    } else if (x == 't' || x == 'f' || x == 'n') {
      t |= kTextLiteral;
    } else {
      t |= kTextOther;
    }
  }
  return t;
}

bool same_language(const Dfa& x, const Dfa& y, size_t max_states) {
  return Dfa::subtract(x, y, max_states).empty() && Dfa::subtract(y, x, max_states).empty();
}

// a minus bd where both hold texts of one type `t` only.
std::optional<Dfa> without_one_type(const OneOfContext& c, const Dfa& a, const Dfa& bd,
                                    bool counts_chars, unsigned t) {
  // Literals, or any number at all: every spelling is in bd.
  if (t == kTextLiteral) return Dfa::subtract(a, bd, c.max_states);
  if (t == kTextNumber) {
    if (&bd == c.sd.number.get() || same_language(bd, *c.sd.number, c.max_states))
      return Dfa::subtract(a, bd, c.max_states);
    if (&bd == c.sd.integer.get() || &bd == c.sd.integer_strict.get() ||
        same_language(bd, *c.sd.integer, c.max_states) ||
        same_language(bd, *c.sd.integer_strict, c.max_states)) {
      // Integers: every plain spelling of an integer value.
      return Dfa::subtract(Dfa::intersect(a, plain_decimals(), c.max_states), bd, c.max_states);
    }
    return std::nullopt;
  }
  if (t == kTextString && !counts_chars) {
    // Strings b spells at least as every plain spelling; keep only those.
    return Dfa::subtract(Dfa::intersect(a, plain_spelled_strings(), c.max_states), bd,
                         c.max_states);
  }
  return std::nullopt;
}

// a minus the texts whose values leaf b matches, covering every spelling of
// those values that the result keeps; nullopt when that cannot be made exact.
// Leaves of several types (merged alternatives) go type by type: what b
// removes from a's strings says nothing of a's numbers.
std::optional<Dfa> without(const OneOfContext& c, const Dfa& a, const GrammarNode& b) {
  const Dfa& bd = *c.g.dfas[b.dfa];
  const unsigned ta = text_types(a), tb = text_types(bd);
  if (((ta | tb) & kTextOther) != 0) return std::nullopt;
  if (ta == tb && std::popcount(tb) == 1) return without_one_type(c, a, bd, b.counts_chars, tb);
  const Dfa literals = [&] {
    const Dfa* lits[] = {c.sd.true_.get(), c.sd.false_.get(), c.sd.null_.get()};
    return Dfa::unite(lits, c.max_states);
  }();
  std::vector<Dfa> pieces;
  for (const unsigned t : {kTextString, kTextNumber, kTextLiteral}) {
    if ((ta & t) == 0) continue;
    const Dfa& all = t == kTextString ? *c.sd.string : t == kTextNumber ? *c.sd.number : literals;
    Dfa at = ta == t ? a : Dfa::intersect(a, all, c.max_states);
    if ((tb & t) == 0) {
      pieces.push_back(std::move(at));
      continue;
    }
    const Dfa bt = tb == t ? bd : Dfa::intersect(bd, all, c.max_states);
    std::optional<Dfa> r = without_one_type(c, at, bt, b.counts_chars, t);
    if (!r) return std::nullopt;
    pieces.push_back(std::move(*r));
  }
  std::vector<const Dfa*> ptrs;
  for (const auto& d : pieces) ptrs.push_back(&d);
  return Dfa::unite(ptrs, c.max_states);
}

bool overlap(const Dfa& a, const Dfa& b, size_t max_states) {
  try {
    return !Dfa::intersect(a, b, max_states).empty();
  } catch (const Error&) {
    return true;
  }
}

}  // namespace

namespace {

// Branches whose options changed, rebuilt from them (one option: itself).
void rebuild(OneOfContext& c, const std::set<size_t>& changed,
             const std::vector<std::vector<uint32_t>>& opts, std::vector<uint32_t>& branches) {
  for (size_t i : changed) {
    if (opts[i].size() == 1) {
      branches[i] = opts[i][0];
      continue;
    }
    GrammarNode alt;
    alt.kind = NodeKind::kAnyOf;
    alt.options = opts[i];
    branches[i] = c.add_node(std::move(alt));
  }
}

// {} when several branches accept it matches them all, so no instance is
// {}: every object option that accepts it becomes nonempty (an exact
// removal, whatever else the options hold). Closed objects of different
// branches that declare no name in common share only {}, so this is what
// makes them disjoint. Rebuilds the branches that change.
void without_shared_empty_object(OneOfContext& c, std::vector<uint32_t>& branches,
                                 std::vector<std::vector<uint32_t>>& opts) {
  std::vector<std::pair<size_t, size_t>> empty_ok;  // (branch, option) accepting {}
  for (size_t i = 0; i < opts.size(); ++i) {
    for (size_t k = 0; k < opts[i].size(); ++k) {
      const GrammarNode& n = c.g.nodes[opts[i][k]];
      if (n.kind == NodeKind::kObject && n.min_props == 0 && n.required.empty())
        empty_ok.push_back({i, k});
    }
  }
  std::set<size_t> owners;
  for (auto [i, k] : empty_ok) owners.insert(i);
  if (owners.size() < 2) return;  // {} matches at most one branch
  std::set<size_t> changed;
  for (auto [i, k] : empty_ok) {
    GrammarNode n = c.g.nodes[opts[i][k]];
    n.min_props = 1;
    if (n.max_props == 0) n = GrammarNode{};  // {} was its only value
    opts[i][k] = c.add_node(std::move(n));
    changed.insert(i);
  }
  rebuild(c, changed, opts, branches);
}

// The index of the property `name` declares in n (props.size(): none), and
// whether n requires property k.
size_t property_index(const GrammarNode& n, const std::string& name) {
  return static_cast<size_t>(std::find_if(n.props.begin(), n.props.end(),
                                          [&](const ObjectProperty& q) { return q.name == name; }) -
                             n.props.begin());
}

bool requires_property(const GrammarNode& n, size_t k) {
  return std::find(n.required.begin(), n.required.end(), k) != n.required.end();
}

// The property that tells object options apart where present: every
// object option declares it, their values are pairwise disjoint, and some
// option does not require it (else the branches are disjoint already).
std::optional<std::string> optional_discriminator(const OneOfContext& c,
                                                  const std::vector<uint32_t>& objects) {
  const GrammarNode& first = c.g.nodes[objects[0]];
  for (const auto& p : first.props) {
    std::vector<uint32_t> values;
    bool optional = false;
    for (uint32_t o : objects) {
      const GrammarNode& n = c.g.nodes[o];
      const size_t k = property_index(n, p.name);
      if (k == n.props.size() || c.g.nodes[n.props[k].node].kind == NodeKind::kNever) break;
      optional |= !requires_property(n, k);
      values.push_back(n.props[k].node);
    }
    if (values.size() != objects.size() || !optional) continue;
    bool apart = true;
    for (size_t i = 0; i < values.size() && apart; ++i)
      for (size_t j = i + 1; j < values.size() && apart; ++j) {
        c.tick();
        apart = values_disjoint(c.g, values[i], values[j]);
      }
    if (apart) return p.name;
  }
  return std::nullopt;
}

// Objects told apart by a property only where it is present: each object
// option splits into "present" (required; disjoint from every other
// branch's object by the property's values) and "absent" (its value
// kNever), and the absent parts are made exclusive in turn. False when
// that cannot be done exactly; the options are then left unchanged.
bool split_on_optional_discriminator(OneOfContext& c, std::vector<uint32_t>& branches,
                                     std::vector<std::vector<uint32_t>>& opts, int depth) {
  std::vector<std::pair<size_t, size_t>> at;  // (branch, option) of each object option
  std::vector<uint32_t> objects;
  for (size_t i = 0; i < opts.size(); ++i) {
    size_t here = 0;
    for (size_t k = 0; k < opts[i].size(); ++k) {
      if (c.g.nodes[opts[i][k]].kind != NodeKind::kObject) continue;
      at.push_back({i, k});
      objects.push_back(opts[i][k]);
      ++here;
    }
    if (here > 1) return false;  // several object options in one branch
  }
  if (objects.size() < 2 || objects.size() > 32 || depth > 4) return false;
  const std::optional<std::string> name = optional_discriminator(c, objects);
  if (!name) return false;
  const uint32_t never = c.add_node(GrammarNode{});
  std::vector<uint32_t> present(objects.size()), absent;
  std::vector<size_t> absent_of;  // index into objects
  for (size_t x = 0; x < objects.size(); ++x) {
    GrammarNode p = c.g.nodes[objects[x]];
    const size_t k = property_index(p, *name);
    if (!requires_property(p, k)) {
      GrammarNode a = p;
      a.props[k].node = never;
      absent.push_back(c.add_node(std::move(a)));
      absent_of.push_back(x);
      p.required.push_back(static_cast<uint32_t>(k));
    }
    present[x] = c.add_node(std::move(p));
  }
  std::vector<uint32_t> absent_out = absent;
  if (absent.size() > 1) {
    auto made = exclusive_branches(c, absent, depth + 1);
    if (!made) return false;
    absent_out = std::move(*made);
  }
  std::set<size_t> changed;
  for (size_t x = 0; x < objects.size(); ++x) {
    const auto [i, k] = at[x];
    opts[i][k] = present[x];
    changed.insert(i);
  }
  for (size_t y = 0; y < absent_out.size(); ++y) {
    const size_t i = at[absent_of[y]].first;
    flatten(c, absent_out[y], opts[i], 0);
  }
  rebuild(c, changed, opts, branches);
  return true;
}

}  // namespace

std::optional<std::vector<uint32_t>> exclusive_branches(OneOfContext& c,
                                                        const std::vector<uint32_t>& given,
                                                        int depth) {
  std::vector<uint32_t> branches = given;
  std::vector<std::vector<uint32_t>> opts(branches.size());
  for (size_t i = 0; i < branches.size(); ++i)
    if (!flatten(c, branches[i], opts[i], 0)) return std::nullopt;
  // The compiler calls this on branches it could not prove disjoint; the
  // recursion's absent parts may already be.
  if (depth == 0 || !branches_disjoint(c.g, branches, c.tick))
    split_on_optional_discriminator(c, branches, opts, depth);
  without_shared_empty_object(c, branches, opts);
  // Each leaf's remaining language, against the other branches' original
  // leaves (a value matching both must go from both); null = unchanged.
  std::vector<std::vector<std::shared_ptr<const Dfa>>> rest(branches.size());
  try {
    for (size_t i = 0; i < branches.size(); ++i) {
      for (uint32_t o : opts[i]) {
        const GrammarNode& leaf = c.g.nodes[o];
        std::shared_ptr<const Dfa> cur;
        if (leaf.kind == NodeKind::kLeaf) {
          for (size_t j = 0; j < branches.size(); ++j) {
            for (uint32_t q : j == i ? std::vector<uint32_t>{} : opts[j]) {
              c.tick();
              const GrammarNode& other = c.g.nodes[q];
              const Dfa& now = cur ? *cur : *c.g.dfas[leaf.dfa];
              if (other.kind != NodeKind::kLeaf ||
                  !overlap(now, *c.g.dfas[other.dfa], c.max_states))
                continue;
              std::optional<Dfa> r = without(c, now, other);
              if (!r) return std::nullopt;
              cur = std::make_shared<const Dfa>(std::move(*r));
            }
          }
        }
        rest[i].push_back(std::move(cur));
      }
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    return std::nullopt;  // a product past the state budget: keep the strict error
  }
  std::vector<uint32_t> out;
  for (size_t i = 0; i < branches.size(); ++i) {
    if (std::all_of(rest[i].begin(), rest[i].end(), [](const auto& d) { return !d; })) {
      out.push_back(branches[i]);
      continue;
    }
    std::vector<uint32_t> kept;
    for (size_t k = 0; k < opts[i].size(); ++k) {
      if (!rest[i][k]) {
        kept.push_back(opts[i][k]);
      } else if (!rest[i][k]->empty()) {
        GrammarNode n = c.g.nodes[opts[i][k]];
        n.dfa = c.add_dfa(rest[i][k]);
        kept.push_back(c.add_node(std::move(n)));
      }
    }
    GrammarNode alt;  // kNever when nothing is left
    if (kept.size() == 1) {
      out.push_back(kept[0]);
      continue;
    }
    if (!kept.empty()) {
      alt.kind = NodeKind::kAnyOf;
      alt.options = std::move(kept);
    }
    out.push_back(c.add_node(std::move(alt)));
  }
  if (!branches_disjoint(c.g, out, c.tick)) return std::nullopt;
  return out;
}

}  // namespace nextok::constraint
