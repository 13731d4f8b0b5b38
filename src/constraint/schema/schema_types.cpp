#include "constraint/schema/schema_types.hpp"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "constraint/schema/standard_dfas.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

using json = nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& ptr, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, ptr, "schema at " + ptr + ": " + why);
}

unsigned type_bit(const json& t, const std::string& ptr) {
  if (!t.is_string()) bad(ptr, "type names must be strings");
  const std::string s = t.get<std::string>();
  if (s == "null") return kNull;
  if (s == "boolean") return kBoolean;
  if (s == "object") return kObject;
  if (s == "array") return kArray;
  if (s == "number") return kNumber | kInteger;
  if (s == "integer") return kInteger;
  if (s == "string") return kString;
  bad(ptr, "unknown type \"" + s + "\"");
}

double as_double(const json& v) {
  return v.get<double>();
}

}  // namespace

unsigned parse_types(const json& type, const std::string& ptr) {
  if (type.is_array()) {
    unsigned bits = 0;
    for (const auto& t : type) bits |= type_bit(t, ptr);
    return bits;
  }
  return type_bit(type, ptr);
}

uint32_t count_of(const json& v, const std::string& ptr) {
  if (!v.is_number()) bad(ptr, "must be a non-negative integer");
  const double d = v.get<double>();
  if (!(d >= 0) || d != std::floor(d)) bad(ptr, "must be a non-negative integer");
  return d >= 4294967295.0 ? kUnbounded : static_cast<uint32_t>(d);
}

std::string pointer_escape(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

bool NumberBounds::add(const json& s, const std::string& ptr) {
  bool any = false;
  // Keeps the tighter bound; on equal values an exclusive bound wins.
  auto fold = [&](Bound& cur, const json& v, bool exclusive, bool lower, const std::string& where) {
    if (!v.is_number()) bad(where, "must be a number");
    any = true;
    if (cur.value) {
      const double a = json::parse(*cur.value).get<double>(), b = as_double(v);
      const bool tighter = lower ? b > a : b < a;
      if (!tighter && !(b == a && exclusive)) return;
    }
    cur.value = v.dump();
    cur.exclusive = exclusive;
  };
  auto flag = [&](const char* kw) {  // draft 4: exclusiveMinimum: true
    auto it = s.find(kw);
    return it != s.end() && it->is_boolean() && it->get<bool>();
  };
  if (auto it = s.find("minimum"); it != s.end())
    fold(lo, *it, flag("exclusiveMinimum"), true, ptr + "/minimum");
  if (auto it = s.find("maximum"); it != s.end())
    fold(hi, *it, flag("exclusiveMaximum"), false, ptr + "/maximum");
  if (auto it = s.find("exclusiveMinimum"); it != s.end() && !it->is_boolean()) {
    fold(lo, *it, true, true, ptr + "/exclusiveMinimum");
  }
  if (auto it = s.find("exclusiveMaximum"); it != s.end() && !it->is_boolean()) {
    fold(hi, *it, true, false, ptr + "/exclusiveMaximum");
  }
  return any;
}

bool number_satisfies(const json& s, const json& v) {
  const double x = as_double(v);
  auto num = [&](const char* kw) -> const json* {
    auto it = s.find(kw);
    return it != s.end() && it->is_number() ? &*it : nullptr;
  };
  auto flag = [&](const char* kw) {
    auto it = s.find(kw);
    return it != s.end() && it->is_boolean() && it->get<bool>();
  };
  if (auto m = num("minimum")) {
    if (flag("exclusiveMinimum") ? !(x > as_double(*m)) : !(x >= as_double(*m))) return false;
  }
  if (auto m = num("maximum")) {
    if (flag("exclusiveMaximum") ? !(x < as_double(*m)) : !(x <= as_double(*m))) return false;
  }
  if (auto m = num("exclusiveMinimum"); m && !(x > as_double(*m))) return false;
  if (auto m = num("exclusiveMaximum"); m && !(x < as_double(*m))) return false;
  if (auto m = num("multipleOf")) {
    const double q = x / as_double(*m);
    if (!std::isfinite(q) || q != std::floor(q)) return false;
  }
  return true;
}

namespace {

// m as p / 10^k with p an integer (no exponent in its text, trailing
// fraction zeros dropped); false when m has no such short form.
bool decimal_parts(const json& m, uint64_t& p, uint32_t& k) {
  if (m.is_number_unsigned() || m.is_number_integer()) {
    if (m.get<int64_t>() <= 0) return false;
    p = static_cast<uint64_t>(m.get<int64_t>());
    k = 0;
    return true;
  }
  std::string text = m.dump();
  if (text.find_first_of("eE-") != std::string::npos) return false;
  const size_t dot = text.find('.');
  if (dot != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  k = dot == std::string::npos || dot >= text.size() ? 0
                                                     : static_cast<uint32_t>(text.size() - dot - 1);
  if (dot != std::string::npos && dot < text.size()) text.erase(dot, 1);
  if (text.empty() || text.size() > 15) return false;
  p = std::stoull(text);
  return p > 0;
}

}  // namespace

std::optional<Dfa> multiple_of_dfa(const json& m) {
  uint64_t p = 0;
  uint32_t k = 0;
  if (!decimal_parts(m, p, k) || p > kMaxMultipleOf || k > kMaxMultipleOfDigits)
    return std::nullopt;
  if (k == 0 && p < 2) return std::nullopt;  // every integer: the integer regex
  // x is a multiple of p / 10^k when x * 10^k is an integer multiple of p:
  // the digits are read as one integer (remainder mod p) through the k-th
  // fraction digit; later fraction digits must be 0. States: 0 start, 1
  // after '-', 2 the integer 0, then per remainder r: the integer part
  // (int_at), the point just read (dot_at), and j = 1 .. k + 1 fraction
  // digits read (frac_at; k + 1: past the k-th, only zeros).
  const size_t base = 3;
  auto int_at = [&](uint64_t r) { return static_cast<int32_t>(base + r); };
  auto dot_at = [&](uint64_t r) { return static_cast<int32_t>(base + p + r); };
  auto frac_at = [&](uint64_t r, uint32_t j) {
    return static_cast<int32_t>(base + 2 * p + (j - 1) * p + r);
  };
  const size_t n = base + 2 * p + (k + 1) * p;
  std::vector<int32_t> t(n * 256, Dfa::kDead);
  std::vector<uint8_t> accepting(n, 0);
  auto at = [&](size_t state, char c) -> int32_t& {
    return t[state * 256 + static_cast<uint8_t>(c)];
  };
  // Whether r followed by `more` zero digits is divisible by p.
  std::vector<uint64_t> pow10(k + 1, 1 % p);
  for (uint32_t i = 1; i <= k; ++i) pow10[i] = pow10[i - 1] * 10 % p;
  auto divides = [&](uint64_t r, uint32_t more) { return r * pow10[more] % p == 0; };
  for (size_t from : {size_t{0}, size_t{1}}) {
    at(from, '0') = 2;
    for (char c = '1'; c <= '9'; ++c) at(from, c) = int_at(static_cast<uint64_t>(c - '0') % p);
  }
  at(0, '-') = 1;
  accepting[2] = 1;
  at(2, '.') = dot_at(0);
  for (uint64_t r = 0; r < p; ++r) {
    const auto s = static_cast<size_t>(int_at(r));
    for (char c = '0'; c <= '9'; ++c)
      at(s, c) = int_at((10 * r + static_cast<uint64_t>(c - '0')) % p);
    at(s, '.') = dot_at(r);
    accepting[s] = divides(r, k);
    // A fraction digit: into the remainder while j <= k, else only zeros.
    auto digit = [&](size_t from, uint32_t j) {  // j: fraction digits read before this one
      if (j < k) {
        for (char c = '0'; c <= '9'; ++c)
          at(from, c) = frac_at((10 * r + static_cast<uint64_t>(c - '0')) % p, j + 1);
      } else {
        at(from, '0') = frac_at(r, k + 1);
      }
    };
    digit(static_cast<size_t>(dot_at(r)), 0);
    for (uint32_t j = 1; j <= k + 1; ++j) {
      const auto f = static_cast<size_t>(frac_at(r, j));
      digit(f, std::min(j, k));
      accepting[f] = divides(r, k - std::min(j, k));
    }
  }
  return Dfa::from_table(std::move(t), accepting);
}

std::optional<Dfa> plain_multiples_dfa(const json& m) {
  if (!m.is_number() || !(m.get<double>() > 0)) return std::nullopt;
  if (auto d = multiple_of_dfa(m)) return d;
  const std::string text = m.dump();
  if (text.rfind("0.", 0) == 0 && text.find_first_not_of('0', 2) == text.size() - 1 &&
      text.back() == '1') {
    // 10^-k: every fraction digit past the k-th is 0.
    return Dfa::compile(R"(-?(0|[1-9][0-9]*)(\.[0-9]{1,)" + std::to_string(text.size() - 2) +
                        "}0*)?");
  }
  // 1 and 10^n: multiple_of_regex is exact on plain decimals there.
  if (m.get<double>() != std::floor(m.get<double>())) return std::nullopt;
  if (auto re = multiple_of_regex(m, false)) return Dfa::compile(*re);
  return std::nullopt;
}

std::optional<std::string> multiple_of_regex(const json& m, bool integer) {
  if (m.is_number_integer() || m.is_number_unsigned() ||
      (m.get<double>() == std::floor(m.get<double>()) && m.get<double>() < 1e15)) {
    const auto k = static_cast<uint64_t>(m.get<double>());
    if (k == 1) return std::string(kIntegerRegexText);
    // 10^n: the integer part ends in n zeros (or is 0).
    uint64_t p = 1;
    size_t zeros = 0;
    while (p < k && zeros < 18) {
      p *= 10;
      ++zeros;
    }
    if (p == k) {
      return "-?(0|[1-9][0-9]*" + std::string(zeros, '0') + ")(\\.0+)?";
    }
    return std::nullopt;
  }
  // 10^-k: at most k fraction digits (trailing zeros are harmless but
  // bounded too, which is sound).
  const std::string text = m.dump();
  if (text.rfind("0.", 0) == 0 && text.find_first_not_of('0', 2) == text.size() - 1 &&
      text.back() == '1') {
    const size_t k = text.size() - 2;
    if (integer) return std::string(kIntegerRegexText);
    return "-?(0|[1-9][0-9]*)(\\.[0-9]{1," + std::to_string(k) + "})?";
  }
  return std::nullopt;
}

// --- oneOf ------------------------------------------------------------------

namespace {

// Which first bytes can start a value of node n (bitset over 256 bytes).
void first_bytes(const Grammar& g, uint32_t n, std::vector<bool>& out, std::vector<uint8_t>& seen) {
  if (seen[n]) return;
  seen[n] = 1;
  const GrammarNode& node = g.nodes[n];
  switch (node.kind) {
    case NodeKind::kNever:
      return;
    case NodeKind::kObject:
      out['{'] = true;
      return;
    case NodeKind::kArray:
      out['['] = true;
      return;
    case NodeKind::kLeaf: {
      const Dfa& d = *g.dfas[node.dfa];
      for (int b = 0; b < 256; ++b)
        if (d.next(d.start(), static_cast<uint8_t>(b)) >= 0) out[static_cast<size_t>(b)] = true;
      return;
    }
    case NodeKind::kAnyOf:
      for (uint32_t o : node.options) first_bytes(g, o, out, seen);
      return;
  }
}

// Two leaves share no text: their DFAs' product accepts nothing.
bool leaves_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b) {
  try {
    return Dfa::intersect(*g.dfas[a.dfa], *g.dfas[b.dfa], 20000).empty();
  } catch (const Error&) {
    return false;
  }
}

bool objects_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b, int depth);
bool values_disjoint(const Grammar& g, uint32_t x, uint32_t y, int depth);

// Two arrays no value satisfies both: their lengths cannot agree, or at a
// position every common value has, their items are disjoint.
bool arrays_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b, int depth) {
  const auto longest = [](const GrammarNode& n) {
    return n.items == kNoNode ? std::min<uint64_t>(n.max_items, n.prefix.size()) : n.max_items;
  };
  const uint64_t lo = std::max(a.min_items, b.min_items);
  if (lo > std::min<uint64_t>(longest(a), longest(b))) return true;
  if (depth <= 0) return false;
  const auto item = [](const GrammarNode& n, size_t i) {
    return i < n.prefix.size() ? n.prefix[i] : n.items;
  };
  for (size_t i = 0; i < std::min<uint64_t>(lo, 8); ++i) {
    const uint32_t x = item(a, i), y = item(b, i);
    if (x != kNoNode && y != kNoNode && values_disjoint(g, x, y, depth - 1)) return true;
  }
  return false;
}

void value_options(const Grammar& g, uint32_t n, std::vector<uint32_t>& out, int depth) {
  const GrammarNode& x = g.nodes[n];
  if (x.kind == NodeKind::kAnyOf && depth < 16) {
    for (uint32_t o : x.options) value_options(g, o, out, depth + 1);
  } else if (x.kind != NodeKind::kNever) {
    out.push_back(n);
  }
}

// No JSON value satisfies both nodes: each option of one against each of
// the other, by first byte, by DFA intersection of leaves, or by a required
// property of objects (to a bounded depth). False when not proven.
bool values_disjoint(const Grammar& g, uint32_t x, uint32_t y, int depth) {
  std::vector<uint32_t> xs, ys;
  value_options(g, x, xs, 0);
  value_options(g, y, ys, 0);
  if (xs.size() * ys.size() > 64) return false;
  for (uint32_t ox : xs) {
    for (uint32_t oy : ys) {
      const GrammarNode& a = g.nodes[ox];
      const GrammarNode& b = g.nodes[oy];
      if (a.kind == NodeKind::kLeaf && b.kind == NodeKind::kLeaf) {
        if (!leaves_disjoint(g, a, b)) return false;
      } else if (a.kind == NodeKind::kObject && b.kind == NodeKind::kObject) {
        if (depth <= 0 ||
            !(objects_disjoint(g, a, b, depth - 1) || objects_disjoint(g, b, a, depth - 1)))
          return false;
      } else if (a.kind == NodeKind::kArray && b.kind == NodeKind::kArray) {
        if (!arrays_disjoint(g, a, b, depth)) return false;
      } else if (a.kind == b.kind) {
        return false;
      } else if (a.kind == NodeKind::kLeaf || b.kind == NodeKind::kLeaf) {
        // A leaf against a container: a leaf never starts with '{' or '['.
        const GrammarNode& leaf = a.kind == NodeKind::kLeaf ? a : b;
        const Dfa& d = *g.dfas[leaf.dfa];
        if (d.next(d.start(), '{') >= 0 || d.next(d.start(), '[') >= 0) return false;
      }
      // Object against array: told apart by their first byte.
    }
  }
  return true;
}

bool objects_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b) {
  return objects_disjoint(g, a, b, 2);
}

}  // namespace

bool closed_object(const GrammarNode& n) {
  return n.kind == NodeKind::kObject && n.additional == kNoNode && n.pattern_props.empty();
}

bool names_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b) {
  const auto usable = [&](const ObjectProperty& p) {
    return g.nodes[p.node].kind != NodeKind::kNever;
  };
  for (const auto& pa : a.props)
    for (const auto& pb : b.props)
      if (pa.name == pb.name && usable(pa) && usable(pb)) return false;
  return true;
}

bool values_disjoint(const Grammar& g, uint32_t x, uint32_t y) {
  return values_disjoint(g, x, y, 2);
}

namespace {

bool objects_disjoint(const Grammar& g, const GrammarNode& a, const GrammarNode& b, int depth) {
  // Closed objects with no name in common share only {}, which one of them
  // cannot be.
  if (closed_object(a) && closed_object(b) && names_disjoint(g, a, b) && a.min_props > 0)
    return true;
  for (uint32_t ri : a.required) {
    const auto& pa = a.props[ri];
    const ObjectProperty* pb = nullptr;
    for (const auto& p : b.props)
      if (p.name == pa.name) pb = &p;
    if (!pb) {
      if (b.additional == kNoNode && b.pattern_props.empty()) return true;  // b forbids it
      continue;
    }
    if (g.nodes[pb->node].kind == NodeKind::kNever) return true;  // b has no value for it
    const bool b_requires = std::any_of(b.required.begin(), b.required.end(),
                                        [&](uint32_t k) { return &b.props[k] == pb; });
    if (b_requires && values_disjoint(g, pa.node, pb->node, depth)) return true;
  }
  return false;
}

bool pair_disjoint(const Grammar& g, uint32_t x, uint32_t y) {
  std::vector<bool> fx(256), fy(256);
  std::vector<uint8_t> sx(g.nodes.size()), sy(g.nodes.size());
  first_bytes(g, x, fx, sx);
  first_bytes(g, y, fy, sy);
  bool overlap = false;
  for (size_t b = 0; b < 256; ++b) overlap |= fx[b] && fy[b];
  if (!overlap) return true;
  const auto& a = g.nodes[x];
  const auto& b = g.nodes[y];
  if (a.kind == NodeKind::kLeaf && b.kind == NodeKind::kLeaf) return leaves_disjoint(g, a, b);
  if (a.kind == NodeKind::kObject && b.kind == NodeKind::kObject) {
    return objects_disjoint(g, a, b) || objects_disjoint(g, b, a);
  }
  if (a.kind == NodeKind::kArray && b.kind == NodeKind::kArray) return arrays_disjoint(g, a, b, 2);
  if (a.kind == NodeKind::kAnyOf || b.kind == NodeKind::kAnyOf) return values_disjoint(g, x, y, 2);
  return false;
}

// Whether some text is accepted by two of the leaves, found in one walk over
// all their DFAs together: a walk state is the set of (leaf, DFA state) still
// alive, and only sets of two or more can lead to a shared text. That costs
// the states of the leaves' union (for string consts: their trie), where
// pairwise products would cost the square of their count. nullopt past the
// budget of walk states.
std::optional<bool> leaves_disjoint_together(const Grammar& g, const std::vector<uint32_t>& leaves,
                                             size_t budget, const std::function<void()>& tick,
                                             const std::vector<uint32_t>* owners = nullptr) {
  // Leaves with one owner may overlap each other (owners: per leaf; by
  // default each leaf is its own).
  auto owner = [&](uint32_t i) { return owners ? (*owners)[i] : i; };
  using Walk = std::vector<std::pair<uint32_t, int32_t>>;  // (leaf, state), sorted
  std::set<Walk> seen;
  std::vector<Walk> work(1);
  for (uint32_t i = 0; i < leaves.size(); ++i) {
    const Dfa& d = *g.dfas[g.nodes[leaves[i]].dfa];
    if (d.start() >= 0) work[0].push_back({i, d.start()});
  }
  std::vector<Walk> next(256);
  while (!work.empty()) {
    if (tick) tick();
    const Walk w = std::move(work.back());
    work.pop_back();
    uint32_t first_owner = UINT32_MAX;
    for (auto [i, q] : w) {
      if (!g.dfas[g.nodes[leaves[i]].dfa]->accepting(q)) continue;
      if (first_owner == UINT32_MAX) first_owner = owner(i);
      if (owner(i) != first_owner) return false;
    }
    for (auto& n : next) n.clear();
    for (auto [i, q] : w) {
      const Dfa& d = *g.dfas[g.nodes[leaves[i]].dfa];
      for (int b = 0; b < 256; ++b) {
        const int32_t q2 = d.next(q, static_cast<uint8_t>(b));
        if (q2 >= 0) next[static_cast<size_t>(b)].push_back({i, q2});
      }
    }
    for (auto& n : next) {
      // States of one owner never make an overlap by themselves.
      if (n.size() < 2 || std::all_of(n.begin(), n.end(), [&](const auto& x) {
            return owner(x.first) == owner(n.front().first);
          })) {
        continue;
      }
      if (seen.insert(n).second) work.push_back(n);
      if (seen.size() > budget) return std::nullopt;
    }
  }
  return true;
}

}  // namespace

// Many object branches told apart by one property every branch requires
// and whose values (leaves) no two branches share: one joint walk of all
// those leaves instead of a check per pair of branches.
static bool discriminated(const Grammar& g, const std::vector<uint32_t>& objects,
                          const std::function<void()>& tick) {
  const GrammarNode& first = g.nodes[objects[0]];
  for (uint32_t r : first.required) {
    const std::string& name = first.props[r].name;
    std::vector<uint32_t> leaves, owners;
    bool ok = true;
    for (uint32_t b = 0; b < objects.size() && ok; ++b) {
      const GrammarNode& o = g.nodes[objects[b]];
      ok = false;
      for (uint32_t k : o.required) {
        if (o.props[k].name != name) continue;
        std::vector<uint32_t> vs;
        value_options(g, o.props[k].node, vs, 0);
        ok = std::all_of(vs.begin(), vs.end(),
                         [&](uint32_t v) { return g.nodes[v].kind == NodeKind::kLeaf; });
        for (uint32_t v : vs) {
          leaves.push_back(v);
          owners.push_back(b);
        }
        break;
      }
    }
    if (!ok) continue;
    if (leaves_disjoint_together(g, leaves, 200000, tick, &owners).value_or(false)) return true;
  }
  return false;
}

bool branches_disjoint(const Grammar& g, const std::vector<uint32_t>& options,
                       const std::function<void()>& tick) {
  std::vector<uint32_t> leaves, others;
  for (uint32_t o : options) {
    if (g.nodes[o].kind == NodeKind::kLeaf) leaves.push_back(o);
    if (g.nodes[o].kind != NodeKind::kLeaf && g.nodes[o].kind != NodeKind::kNever)
      others.push_back(o);
  }
  const auto pairs = [&](const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                         bool same) {
    for (size_t i = 0; i < a.size(); ++i)
      for (size_t j = same ? i + 1 : 0; j < b.size(); ++j) {
        if (tick) tick();
        if (!pair_disjoint(g, a[i], b[j])) return false;
      }
    return true;
  };
  const std::optional<bool> apart =
      leaves.size() > 2 ? leaves_disjoint_together(g, leaves, 200000, tick) : std::nullopt;
  if (apart ? !*apart : !pairs(leaves, leaves, true)) return false;
  const bool all_objects = std::all_of(others.begin(), others.end(), [&](uint32_t o) {
    return g.nodes[o].kind == NodeKind::kObject;
  });
  const bool objects_apart = others.size() > 8 && all_objects && discriminated(g, others, tick);
  return (objects_apart || pairs(others, others, true)) && pairs(leaves, others, false);
}

}  // namespace nextok::constraint

namespace nextok::constraint {

namespace {

// Whether a key that meets some_key mask e can be read with a value that
// exists (`prod`): a declared property of the mask, or (it has its
// undeclared bit) a key that names none and matches none of its markers.
bool some_key_possible(const Grammar& g, const GrammarNode& x, size_t e,
                       const std::vector<uint8_t>& prod) {
  if (e < x.some_key_valued.size() && x.some_key_valued[e] != 0) {
    return std::any_of(x.key_claims.begin(), x.key_claims.end(), [&](const auto& c) {
      return c.set == e && prod[c.value] && prod[c.claimed];
    });
  }
  const uint64_t m = x.some_key[e];
  for (size_t i = 0; i < x.props.size() && i < 63; ++i)
    if (((m >> i) & 1U) != 0 && prod[x.props[i].node]) return true;
  if ((m & some_key_bit(e)) == 0) return false;
  return undeclared_key_possible(*g.dfas[x.key_dfa], x, x.some_key_markers[e],
                                 [&](uint32_t v) { return prod[v] != 0; });
}

}  // namespace

void prune_unproductive(Grammar& g) {
  const size_t n = g.nodes.size();
  std::vector<uint8_t> prod(n, 0);
  auto item = [&](const GrammarNode& a, size_t i) {
    return i < a.prefix.size() ? a.prefix[i] : a.items;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (prod[i]) continue;
      const GrammarNode& x = g.nodes[i];
      bool p = false;
      switch (x.kind) {
        case NodeKind::kNever:
          break;
        case NodeKind::kLeaf:
          p = !g.dfas[x.dfa]->empty();
          break;
        case NodeKind::kObject:
          p = std::all_of(x.required.begin(), x.required.end(),
                          [&](uint32_t r) { return prod[x.props[r].node]; }) &&
              [&] {
                for (size_t e = 0; e < x.some_key.size(); ++e)
                  if (!some_key_possible(g, x, e, prod)) return false;
                return true;
              }() &&
              [&] {  // enough keys can exist for minProperties
                if (x.min_props == 0) return true;
                if (x.additional != kNoNode && prod[x.additional]) return true;
                for (const auto& pp : x.pattern_props)
                  if (prod[pp.node]) return true;
                for (const auto& pc : x.pattern_combos)
                  if (prod[pc.second]) return true;
                const auto keys = std::count_if(x.props.begin(), x.props.end(),
                                                [&](const auto& q) { return prod[q.node] != 0; });
                return static_cast<uint64_t>(keys) >= x.min_props;
              }();
          break;
        case NodeKind::kArray: {
          p = true;
          for (size_t k = 0; k < x.min_items && p; ++k) {
            const uint32_t it = item(x, k);
            p = it != kNoNode && prod[it];
            if (k >= x.prefix.size()) break;  // the same schema from here on
          }
          if (p && x.min_contains > 0) {
            // Enough positions before the first unproductive one can hold
            // a contains item.
            GrammarNode y;
            y.max_items = x.max_items;
            for (size_t k = 0; k < x.prefix.size() && prod[x.prefix[k]]; ++k) {
              y.prefix.push_back(x.prefix[k]);
              y.prefix_contains.push_back(x.prefix_contains[k]);
            }
            if (y.prefix.size() == x.prefix.size() && x.items != kNoNode && prod[x.items]) {
              y.items = x.items;
              y.items_contains = x.items_contains;
            }
            const auto usable = [&](uint32_t v) { return v != kNoNode && prod[v]; };
            p = contains_supply(y, 0, x.min_contains, usable) >= x.min_contains;
          }
          break;
        }
        case NodeKind::kAnyOf:
          p = std::any_of(x.options.begin(), x.options.end(), [&](uint32_t o) { return prod[o]; });
          break;
      }
      if (p) {
        prod[i] = 1;
        changed = true;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    GrammarNode& x = g.nodes[i];
    if (!prod[i]) {
      x = GrammarNode{};
      continue;
    }
    if (x.kind == NodeKind::kAnyOf) std::erase_if(x.options, [&](uint32_t o) { return !prod[o]; });
    if (x.kind == NodeKind::kObject && x.additional != kNoNode && !prod[x.additional])
      x.additional = kNoNode;
    if (x.kind == NodeKind::kArray) {
      for (size_t k = 0; k < x.prefix.size(); ++k) {
        if (!prod[x.prefix[k]]) {
          x.prefix.resize(k);
          x.items = kNoNode;
          break;
        }
      }
      if (x.items != kNoNode && !prod[x.items]) x.items = kNoNode;
      if (x.items == kNoNode)
        x.max_items = std::min<uint32_t>(x.max_items, static_cast<uint32_t>(x.prefix.size()));
      x.prefix_contains.resize(std::min(x.prefix_contains.size(), x.prefix.size()));
      for (uint32_t& c : x.prefix_contains)
        if (c != kNoNode && !prod[c]) c = kNoNode;
      if (x.items == kNoNode || (x.items_contains != kNoNode && !prod[x.items_contains]))
        x.items_contains = kNoNode;
    }
  }
}

uint32_t code_points(const std::string& s) {
  uint32_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool items_unique(const json& a) {
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = i + 1; k < a.size(); ++k)
      if (a[i] == a[k]) return false;
  return true;
}

}  // namespace nextok::constraint
