#include "constraint/cfg/json_embed.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "constraint/cfg/automaton_rules.hpp"
#include "constraint/cfg/raw_text_automaton.hpp"
#include "constraint/cfg/xml_styles.hpp"
#include "constraint/schema/schema_compiler.hpp"
#include "nextok/error.hpp"
#include "util/json_depth.hpp"

namespace nextok::constraint::cfg {

namespace {

using Alts = std::vector<std::vector<Symbol>>;

// Where each property name first appears in the schema text: under
// "properties" (rank), else in "required" (after every declared one).
struct NameOrder {
  std::map<std::string, size_t, std::less<>> rank;
  size_t next = 0;

  void walk(const nlohmann::ordered_json& j, bool required_pass) {
    if (j.is_array()) {
      for (const auto& v : j) walk(v, required_pass);
      return;
    }
    if (!j.is_object()) return;
    for (const auto& [k, v] : j.items()) {
      if (!required_pass && k == "properties" && v.is_object()) {
        for (const auto& [name, sub] : v.items()) rank.emplace(name, next++);
      }
      if (required_pass && k == "required" && v.is_array()) {
        for (const auto& name : v)
          if (name.is_string()) rank.emplace(name.get<std::string>(), next++);
      }
      walk(v, required_pass);
    }
  }
  size_t of(const std::string& name) const {
    const auto it = rank.find(name);
    return it == rank.end() ? SIZE_MAX : it->second;
  }
};

struct EmbedOptions {
  std::optional<XmlStyle> xml;  // none: JSON
  bool any_order = false;
};

class Embed {
 public:
  Embed(CfgBuilder& b, const Grammar& g, NameOrder order, size_t at, EmbedOptions opts,
        JsonEmbedCache& cache)
      : b_(b), g_(g), order_(std::move(order)), at_(at), opts_(opts), cache_(cache) {
    // One whitespace rule for every %json of the grammar with this bound.
    ws_ = static_cast<uint32_t>(b_.shared("json_ws:" + std::to_string(g_.max_whitespace), [&] {
      const uint32_t ws = b_.fresh("json_ws", at_);
      std::vector<Symbol> seq;
      if (g_.max_whitespace > 0) {
        ByteSet s;
        for (char c : std::string_view(" \t\n\r")) s.add(static_cast<uint8_t>(c));
        seq.push_back(b_.cfg().terminal(s));
        b_.repeat(seq, 0, 0, g_.max_whitespace, at_, "json_ws");
      }
      b_.define(ws, {seq});
      return static_cast<Symbol>(ws);
    }));
  }

  Symbol node(uint32_t i) {
    if (const auto it = nodes_.find(i); it != nodes_.end()) return it->second;
    const uint32_t nt = b_.fresh("json", at_);
    nodes_.emplace(i, static_cast<Symbol>(nt));  // before the body: recursion
    const GrammarNode& n = g_.nodes[i];
    Alts alts;
    switch (n.kind) {
      case NodeKind::kNever:
        break;
      case NodeKind::kLeaf:
        if (auto s = leaf(n)) alts.push_back({*s});
        break;
      case NodeKind::kAnyOf:
        for (uint32_t o : n.options) alts.push_back({node(o)});
        break;
      case NodeKind::kObject:
        alts = object(n);
        break;
      case NodeKind::kArray:
        alts = array(n);
        break;
    }
    b_.grew(alts.size() + 1, at_);
    b_.define(nt, std::move(alts));
    return static_cast<Symbol>(nt);
  }

  // XML styles: at the top (the schema itself, through anyOf) an object's
  // properties are parameters; in a parameter's value (and at the top) a
  // scalar is raw text; objects and arrays in a value are JSON. `part`
  // keeps only the strings or only the other values.
  Symbol xml_node(uint32_t i, bool top, RawPart part = RawPart::kAll) {
    const auto key = std::tuple(i, top, part);
    if (const auto it = xml_nodes_.find(key); it != xml_nodes_.end()) return it->second;
    const GrammarNode& n = g_.nodes[i];
    const bool json = n.kind == NodeKind::kArray || (n.kind == NodeKind::kObject && !top);
    if (json && part != RawPart::kStrings) {
      const Symbol s = node(i);
      xml_nodes_.emplace(key, s);
      return s;
    }
    const uint32_t nt = b_.fresh("xml", at_);
    xml_nodes_.emplace(key, static_cast<Symbol>(nt));
    Alts alts;
    if (n.kind == NodeKind::kLeaf) {
      if (auto s = leaf_as(n, true, part)) alts.push_back({*s});
    } else if (n.kind == NodeKind::kAnyOf) {
      for (uint32_t o : n.options) alts.push_back({xml_node(o, top, part)});
    } else if (n.kind == NodeKind::kObject && part != RawPart::kStrings) {
      alts = object(n, true);
    }
    b_.grew(alts.size() + 1, at_);
    b_.define(nt, std::move(alts));
    return static_cast<Symbol>(nt);
  }

 private:
  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(ErrorCode::kUnsupported, "grammar",
                b_.where(at_) + ": %json: " + what + " cannot be written as grammar rules");
  }

  std::vector<Symbol> text(std::string_view t) {
    std::vector<Symbol> seq;
    b_.bytes(t, seq, at_);
    return seq;
  }
  void append(std::vector<Symbol>& seq, std::initializer_list<Symbol> more) {
    seq.insert(seq.end(), more);
  }
  // A literal's rule, one per grammar (a hundred tools' keys and tags).
  Symbol lit(std::string_view t) {
    return b_.shared("lit:" + std::string(t), [&] {
      std::vector<Symbol> seq = text(t);
      return seq.size() == 1 ? seq[0] : b_.as_symbol(seq, 0, "json_text", at_);
    });
  }

  static size_t symbols(const Alts& alts) {
    size_t n = alts.size();
    for (const auto& a : alts) n += a.size();
    return n;
  }

  std::optional<Symbol> leaf(const GrammarNode& n) { return leaf_as(n, false, RawPart::kAll); }

  // A leaf's values as JSON text, or (raw) as an XML-style parameter
  // writes them.
  std::optional<Symbol> leaf_as(const GrammarNode& n, bool raw, RawPart part) {
    if (!n.value_ids.empty()) unsupported("uniqueItems");
    const std::shared_ptr<const Dfa>& dfa = g_.dfas[n.dfa];
    const JsonEmbedCache::Key key{
        dfa.get(), n.counts_chars ? n.min_chars : 0u, n.counts_chars ? n.max_chars : kUnbounded,
        raw ? static_cast<int>(part) : -1, raw ? std::string(opts_.xml->close) : std::string()};
    if (const auto it = cache_.leaves.find(key); it != cache_.leaves.end())
      return it->second.second;
    const Dfa& d = *dfa;
    Automaton a = n.counts_chars ? counted(d, n.min_chars, n.max_chars) : Automaton::of(d);
    if (raw) {
      auto r = raw_values(a, opts_.xml->close, b_.limits().max_dfa_states, part);
      if (!r) unsupported("a raw value whose automaton passes max_dfa_states");
      a = std::move(*r);
    }
    const std::optional<Symbol> s = accepted(b_, a, at_, nullptr);
    cache_.leaves.emplace(key, std::pair{dfa, s});
    return s;
  }

  // A string leaf's DFA (quotes included) with its decoded length counted:
  // the product with a counter of characters up to max (or up to min when
  // unbounded). A \u escape of a surrogate is refused, so that every
  // character counted is one code point.
  Automaton counted(const Dfa& d, uint32_t min, uint32_t max) {
    enum Tracker : uint8_t { kBefore, kIn, kEscape, kU1, kU2, kU2Surrogate, kU3, kU4, kClosed };
    const uint32_t cap = max != kUnbounded ? max : min;
    if (cap > kMaxRepetition) unsupported("a string length bound above 2000");
    struct Key {
      int32_t q;
      uint8_t t;
      uint32_t c;
      bool operator<(const Key& o) const { return std::tie(q, t, c) < std::tie(o.q, o.t, o.c); }
    };
    std::map<Key, int32_t> ids;
    std::vector<Key> todo{{d.start(), kBefore, 0}};
    ids.emplace(todo[0], 0);
    Automaton a;
    a.start = 0;
    for (size_t k = 0; k < todo.size(); ++k) {
      const Key s = todo[k];
      a.next.resize((k + 1) * 256, -1);
      a.accepting.push_back(d.accepting(s.q) && s.t == kClosed && s.c >= min);
      for (unsigned x = 0; x < 256; ++x) {
        const auto byte = static_cast<uint8_t>(x);
        const int32_t q = d.next(s.q, byte);
        if (q < 0) continue;
        uint8_t t = s.t;
        uint32_t c = s.c;
        bool counts = false;
        switch (s.t) {
          case kBefore:
            t = byte == '"' ? kIn : kBefore;
            break;
          case kIn:
            if (byte == '"') {
              t = kClosed;
            } else {
              counts = byte < 0x80 || byte >= 0xC0;  // not a continuation byte
              if (byte == '\\') t = kEscape;
            }
            break;
          case kEscape:
            t = byte == 'u' ? kU1 : kIn;
            break;
          case kU1:
            t = byte == 'd' || byte == 'D' ? kU2Surrogate : kU2;
            break;
          case kU2Surrogate:
            if ((byte >= '8' && byte <= '9') || (byte >= 'a' && byte <= 'f') ||
                (byte >= 'A' && byte <= 'F'))
              continue;  // D800-DFFF: half a character
            t = kU3;
            break;
          case kU2:
            t = kU3;
            break;
          case kU3:
            t = kU4;
            break;
          case kU4:
            t = kIn;
            break;
          case kClosed:
            break;
        }
        if (counts) {
          if (c == cap && max != kUnbounded) continue;  // one character too many
          c = std::min(c + 1, cap);
        }
        const Key to{q, t, c};
        auto [it, fresh] = ids.emplace(to, static_cast<int32_t>(todo.size()));
        if (fresh) {
          todo.push_back(to);
          if (todo.size() > b_.limits().max_dfa_states) {
            unsupported("a string length bound whose automaton passes max_dfa_states");
          }
        }
        a.next[k * 256 + x] = it->second;
      }
      b_.grew(1, at_);
    }
    a.states = todo.size();
    return a;
  }
  // One member: JSON `"key": value` (after a comma unless first), or an
  // XML-style parameter (whitespace before it; `value` from xml_value).
  std::vector<Symbol> member(Symbol key, Symbol value, bool first, bool xml) {
    const auto ws = static_cast<Symbol>(ws_);
    std::vector<Symbol> m;
    if (!xml) {
      if (!first) append(m, {ws, lit(","), ws});
      append(m, {key, ws, lit(":"), ws, value});
      return m;
    }
    append(m, {ws, lit(opts_.xml->before), key, value});
    return m;
  }

  // What follows a parameter's name: the style's markup, the value, the
  // closing tag.
  Symbol xml_value(uint32_t v) {
    if (const auto it = xml_values_.find(v); it != xml_values_.end()) return it->second;
    const XmlStyle& x = *opts_.xml;
    const auto ws = static_cast<Symbol>(ws_);
    const uint32_t nt = b_.fresh("xml_value", at_);
    xml_values_.emplace(v, static_cast<Symbol>(nt));
    Alts alts;
    if (x.after_other.empty()) {
      std::vector<Symbol> seq{lit(x.after)};
      if (!x.value_open.empty()) append(seq, {ws, lit(x.value_open)});
      append(seq, {ws, xml_node(v, false), ws, lit(x.close)});
      alts.push_back(std::move(seq));
    } else {
      alts.push_back({lit(x.after), xml_node(v, false, RawPart::kStrings), lit(x.close)});
      alts.push_back(
          {lit(x.after_other), ws, xml_node(v, false, RawPart::kOthers), ws, lit(x.close)});
    }
    b_.grew(symbols(alts), at_);
    b_.define(nt, std::move(alts));
    return static_cast<Symbol>(nt);
  }

  // "{" ws members "}" (XML: the parameters, then whitespace): the declared
  // properties in the schema's order, required ones present, then other
  // keys (additionalProperties); with any_order, any entries in any order.
  Alts object(const GrammarNode& n, bool xml = false) {
    if (!n.pattern_props.empty()) unsupported("patternProperties");
    if (!n.dependent.empty()) unsupported("dependentRequired");
    if (!n.forbidden.empty() || !n.some_key.empty() || !n.key_claims.empty())
      unsupported("a negated object schema");
    std::vector<uint32_t> order(n.props.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return order_.of(n.props[a].name) < order_.of(n.props[b].name);
    });
    std::vector<uint8_t> required(n.props.size(), 0);
    for (uint32_t r : n.required) required[r] = 1;
    const auto nreq = static_cast<uint32_t>(n.required.size());
    const auto value_of = [&](uint32_t v) { return xml ? xml_value(v) : node(v); };
    const auto key_of = [&](const std::string& name) {
      return lit(xml ? name : nlohmann::json(name).dump());
    };
    // Other keys: what the key automaton labels as no declared property.
    std::optional<Symbol> other_key, other_value;
    if (n.additional != kNoNode) {
      const Dfa& keys = *g_.dfas[n.key_dfa];
      Automaton a = Automaton::of(keys);
      const auto np = static_cast<uint32_t>(n.props.size());
      for (size_t q = 0; q < a.states; ++q) {
        const auto labels = keys.labels(static_cast<int32_t>(q));
        const bool declared =
            std::any_of(labels.begin(), labels.end(), [&](uint32_t l) { return l < np; });
        const bool other = std::any_of(labels.begin(), labels.end(), [&](uint32_t l) {
          return l >= np && (n.marker_label == kNoNode || l < n.marker_label);
        });
        a.accepting[q] = !declared && other;
      }
      if (xml) a = xml_names(a);
      if ((other_key = accepted(b_, a, at_, nullptr))) other_value = value_of(n.additional);
    }
    const auto ws = static_cast<Symbol>(ws_);
    const auto wrap = [&](Symbol members) -> Alts {
      if (xml) return {{members, ws}};
      return {{lit("{"), ws, members, lit("}")}};
    };
    if (opts_.any_order)
      return wrap(any_order(n, order, other_key, other_value, key_of, value_of, xml));
    if (n.min_props > nreq) unsupported("minProperties above the required count");
    if (n.max_props != kUnbounded && (n.additional != kNoNode || n.max_props < n.props.size()))
      unsupported("maxProperties");

    // Other keys after the declared ones: a first member, then the rest.
    std::optional<Symbol> other_first, other_rest;
    if (other_key) {
      std::vector<Symbol> rest = member(*other_key, *other_value, false, xml);
      b_.repeat(rest, 0, 0, -1, at_, "json_members");
      if (!xml) rest.push_back(ws);
      const Symbol r = b_.as_symbol(rest, 0, "json_members", at_);
      std::vector<Symbol> first = member(*other_key, *other_value, true, xml);
      first.push_back(r);
      other_first = b_.as_symbol(first, 0, "json_members", at_);
      other_rest = r;
    }
    // F_i: nothing written yet; R_i: something written (next needs a comma).
    const size_t m = order.size();
    std::vector<uint32_t> f(m + 1), r(m + 1);
    for (size_t i = 0; i <= m; ++i) {
      f[i] = b_.fresh("json_object", at_);
      r[i] = b_.fresh("json_object", at_);
    }
    for (size_t i = 0; i <= m; ++i) {
      Alts fa, ra;
      if (i == m) {
        fa.push_back({});
        ra.push_back(xml ? std::vector<Symbol>{} : std::vector<Symbol>{ws});
        if (other_first) fa.push_back({*other_first});
        if (other_rest) ra.push_back({*other_rest});
      } else {
        const ObjectProperty& p = n.props[order[i]];
        const Symbol key = key_of(p.name), value = value_of(p.node);
        fa.push_back(member(key, value, true, xml));
        fa.back().push_back(static_cast<Symbol>(r[i + 1]));
        ra.push_back(member(key, value, false, xml));
        ra.back().push_back(static_cast<Symbol>(r[i + 1]));
        if (!required[order[i]]) {
          fa.push_back({static_cast<Symbol>(f[i + 1])});
          ra.push_back({static_cast<Symbol>(r[i + 1])});
        }
      }
      b_.grew(symbols(fa) + symbols(ra), at_);
      b_.define(f[i], std::move(fa));
      b_.define(r[i], std::move(ra));
    }
    return wrap(static_cast<Symbol>(f[0]));
  }

  // XGrammar's any_order: entries of any permitted key (declared or
  // other), in any order, repeats allowed; only their count is bounded, by
  // max(minProperties, required count) and maxProperties.
  template <class KeyOf, class ValueOf>
  Symbol any_order(const GrammarNode& n, const std::vector<uint32_t>& order,
                   std::optional<Symbol> other_key, std::optional<Symbol> other_value,
                   const KeyOf& key_of, const ValueOf& value_of, bool xml) {
    Alts first, next;
    for (uint32_t k : order) {
      const Symbol key = key_of(n.props[k].name), value = value_of(n.props[k].node);
      first.push_back(member(key, value, true, xml));
      next.push_back(member(key, value, false, xml));
    }
    if (other_key) {
      first.push_back(member(*other_key, *other_value, true, xml));
      next.push_back(member(*other_key, *other_value, false, xml));
    }
    const uint32_t lo = std::max(n.min_props, static_cast<uint32_t>(n.required.size()));
    const uint32_t hi = n.max_props;
    const uint32_t out = b_.fresh("json_object", at_);
    Alts alts;
    if (lo == 0) alts.push_back({});
    if (hi != 0 && (hi == kUnbounded || hi >= lo)) {
      if (lo > kMaxRepetition || (hi != kUnbounded && hi > kMaxRepetition))
        unsupported("a property count above 2000");
      const uint32_t f = b_.fresh("json_entry", at_), x = b_.fresh("json_entry", at_);
      b_.grew(symbols(first) + symbols(next), at_);
      b_.define(f, std::move(first));
      b_.define(x, std::move(next));
      std::vector<Symbol> seq{static_cast<Symbol>(f), static_cast<Symbol>(x)};
      b_.repeat(seq, 1, lo == 0 ? 0 : lo - 1, hi == kUnbounded ? -1 : static_cast<long>(hi) - 1,
                at_, "json_entries");
      if (!xml) seq.push_back(static_cast<Symbol>(ws_));
      alts.push_back(std::move(seq));
    }
    b_.define(out, std::move(alts));
    return static_cast<Symbol>(out);
  }

  // "[" ws items "]": the prefix items in place, then items up to the bounds.
  Alts array(const GrammarNode& n) {
    if (n.unique) unsupported("uniqueItems");
    if (n.min_contains > 0) unsupported("contains");
    const auto k = static_cast<uint32_t>(n.prefix.size());
    const uint32_t min = n.min_items, max = n.max_items;
    if (n.items == kNoNode && min > k) return {};
    const Symbol comma = lit(","), ws = static_cast<Symbol>(ws_);
    // E_j: j items written; the tail after the prefix.
    std::vector<uint32_t> e(k + 1);
    for (auto& x : e) x = b_.fresh("json_array", at_);
    for (uint32_t j = 0; j <= k; ++j) {
      Alts alts;
      if (j < k) {
        if (j >= min) alts.push_back(j == 0 ? std::vector<Symbol>{} : std::vector<Symbol>{ws});
        if (j < max) {
          std::vector<Symbol> seq;
          if (j > 0) append(seq, {ws, comma, ws});
          append(seq, {node(n.prefix[j]), static_cast<Symbol>(e[j + 1])});
          alts.push_back(std::move(seq));
        }
      } else {
        if (j >= min) alts.push_back(j == 0 ? std::vector<Symbol>{} : std::vector<Symbol>{ws});
        if (n.items != kNoNode && (max == kUnbounded || j < max)) {
          const Symbol v = node(n.items);
          const long lo = std::max<long>(1, static_cast<long>(min) - j);
          const long hi = max == kUnbounded ? -1 : static_cast<long>(max) - j;
          if (lo > static_cast<long>(kMaxRepetition) || hi > static_cast<long>(kMaxRepetition))
            unsupported("an item count above 2000");
          // The first of the tail without a comma when nothing came before.
          std::vector<Symbol> more{ws, comma, ws, v};
          b_.repeat(more, 0, lo - 1, hi < 0 ? -1 : hi - 1, at_, "json_items");
          std::vector<Symbol> seq;
          if (j > 0) append(seq, {ws, comma, ws});
          seq.push_back(v);
          seq.insert(seq.end(), more.begin(), more.end());
          seq.push_back(ws);
          alts.push_back(std::move(seq));
        }
      }
      b_.grew(symbols(alts), at_);
      b_.define(e[j], std::move(alts));
    }
    return {{lit("["), ws, static_cast<Symbol>(e[0]), lit("]")}};
  }

  CfgBuilder& b_;
  const Grammar& g_;
  NameOrder order_;
  size_t at_;
  uint32_t ws_ = 0;
  EmbedOptions opts_;
  std::unordered_map<uint32_t, Symbol> nodes_;
  std::map<std::tuple<uint32_t, bool, RawPart>, Symbol> xml_nodes_;
  std::unordered_map<uint32_t, Symbol> xml_values_;
  JsonEmbedCache& cache_;
};

}  // namespace

Symbol embed_json_schema(CfgBuilder& b, std::string_view schema, size_t at, JsonEmbedCache& cache) {
  // The walks below recurse once a level, before the schema compiler's own
  // depth check.
  const size_t max_depth = b.limits().max_schema_depth;
  if (util::json_depth(schema, max_depth) > max_depth) {
    b.fail(at, "%json: the schema nests deeper than " + std::to_string(max_depth) +
                   " levels (ConstraintLimits::max_schema_depth)");
  }
  nlohmann::ordered_json ordered;
  try {
    ordered = nlohmann::ordered_json::parse(schema);
  } catch (const nlohmann::json::exception& e) {
    b.fail(at, std::string("%json: the schema is not valid JSON: ") + e.what());
  }
  auto so = SchemaCompileOptions::limited_by(b.limits());
  EmbedOptions opts;
  if (ordered.is_object()) {
    if (const auto x = ordered.find("x-guidance"); x != ordered.end()) {
      if (!x->is_object()) b.fail(at, "%json: x-guidance must be an object");
      for (const auto& [k, v] : x->items()) {
        if (k == "whitespace_flexible" && v.is_boolean()) {
          so.max_whitespace = v.get<bool>() ? so.max_whitespace : 0;
        } else if (k == "lenient" && v.is_boolean()) {
          so.strict = !v.get<bool>();
        } else {
          throw Error(ErrorCode::kUnsupported, "grammar",
                      b.where(at) + ": %json: the x-guidance option '" + k + "' is not supported");
        }
      }
      ordered.erase("x-guidance");
    }
    if (const auto x = ordered.find("x-nextok"); x != ordered.end()) {
      if (!x->is_object()) b.fail(at, "%json: x-nextok must be an object");
      for (const auto& [k, v] : x->items()) {
        if (k == "style" && v.is_string()) {
          const std::string style = v.get<std::string>();
          opts.xml = xml_style(style);
          if (!opts.xml && style != "json")
            throw Error(ErrorCode::kUnsupported, "grammar",
                        b.where(at) + ": %json: the style '" + style + "' is not supported (" +
                            std::string(kJsonStyleNames) + ")");
        } else if (k == "max_whitespace" && v.is_number_integer() && v.get<long long>() >= 0 &&
                   v.get<long long>() <= 255) {
          so.max_whitespace = static_cast<uint8_t>(v.get<long long>());
        } else if (k == "any_order" && v.is_boolean()) {
          opts.any_order = v.get<bool>();
        } else {
          throw Error(ErrorCode::kUnsupported, "grammar",
                      b.where(at) + ": %json: the x-nextok option '" + k + "' (" + v.dump() +
                          ") is not supported");
        }
      }
      ordered.erase("x-nextok");
    }
  }
  NameOrder order;
  order.walk(ordered, false);
  order.walk(ordered, true);
  Grammar g;
  try {
    g = compile_json_schema(nlohmann::json::parse(ordered.dump()), so, StandardDfas::get()).grammar;
  } catch (const Error& e) {
    throw Error(e.code(), "grammar",
                b.where(at) + ": %json (at " + std::string(e.param()) + "): " + e.what());
  }
  if (g.root == kNoNode) b.fail(at, "%json: the schema accepts no value");
  Embed e(b, g, std::move(order), at, opts, cache);
  const Symbol root = opts.xml ? e.xml_node(g.root, true) : e.node(g.root);
  // A JSON object or array begins and ends with its brackets; XML
  // parameters with their tags (then bounded whitespace).
  const NodeKind kind = g.nodes[g.root].kind;
  if (kind == NodeKind::kArray ? !opts.xml : kind == NodeKind::kObject)
    b.cfg().settle(static_cast<uint32_t>(root));
  return root;
}

}  // namespace nextok::constraint::cfg
