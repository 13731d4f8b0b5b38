#include "constraint/schema/unique_items.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "constraint/schema/schema_types.hpp"
#include "nextok/error.hpp"

namespace nextok::constraint {

using nlohmann::json;

bool is_integral(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

namespace {

std::string escape_number(const std::string& text) {
  std::string out;  // the regex specials of a number text
  for (char c : text) {
    if (c == '.' || c == '+') out += '\\';
    out += c;
  }
  return out;
}

// Python's repr of a double, what json.dumps writes: the shortest digits
// that read back, positional for decimal exponents in [-4, 16), else
// d.ddde±XX (nlohmann's dump switches to exponents at other points).
std::string python_float_text(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const int exp = e == std::string::npos ? 0 : std::atoi(sci.c_str() + e + 1);
  if (exp < -4 || exp >= 16) return sci;
  r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  std::string fixed(buf, r.ptr);
  if (fixed.find('.') == std::string::npos) fixed += ".0";
  return fixed;
}

}  // namespace

std::vector<std::string> number_texts(const json& v) {
  std::vector<std::string> out{v.dump()};
  if (v.is_number_float() && std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    out.push_back(python_float_text(d));
    // An integral double's exact value in digits: equal to it as a number.
    if (d == std::floor(d) && std::abs(d) < 1e300) {
      char buf[320];
      std::snprintf(buf, sizeof buf, "%.0f", d);
      out.push_back(buf);
    }
  }
  std::sort(out.begin() + 1, out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string number_spellings(const json& v, bool integral) {
  if (integral && std::abs(v.get<double>()) < 9007199254740992.0) {
    const auto i = static_cast<long long>(v.get<double>());
    const std::string digits = std::to_string(i < 0 ? -i : i);
    return (i < 0 ? "-" : i == 0 ? "-?" : "") + digits + "(\\.0+)?";
  }
  // Larger or fractional values: each writer's text (plain ones with any
  // number of trailing zeros after the point).
  // An integer literal N also equals N.0 when N converts to a double exactly.
  bool exact = v.is_number_float();
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    const auto d = static_cast<double>(u);
    exact = d < 18446744073709551616.0 && static_cast<uint64_t>(d) == u;
  } else if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    const auto d = static_cast<double>(i);
    exact =
        d >= -9223372036854775808.0 && d < 9223372036854775808.0 && static_cast<int64_t>(d) == i;
  }
  std::vector<std::string> alts;
  for (const std::string& text : number_texts(v)) {
    std::string re = escape_number(text);
    if (text.find_first_of("eE") == std::string::npos)
      re += text.find('.') == std::string::npos ? (exact ? "(\\.0+)?" : "") : "0*";
    if (std::find(alts.begin(), alts.end(), re) == alts.end()) alts.push_back(std::move(re));
  }
  if (alts.size() == 1) return alts[0];
  std::string out = "(?:";
  for (size_t k = 0; k < alts.size(); ++k) out += (k ? "|" : "") + alts[k];
  return out + ")";
}

namespace {

void leaves_of(const Grammar& g, uint32_t node, std::vector<uint32_t>& out, int depth) {
  const GrammarNode& n = g.nodes[node];
  if (n.kind == NodeKind::kAnyOf && depth < 64) {
    for (uint32_t o : n.options) leaves_of(g, o, out, depth + 1);
  } else if (n.kind == NodeKind::kLeaf) {
    out.push_back(node);
  }
}

bool leaf_accepts(const Grammar& g, const GrammarNode& leaf, const json& v) {
  const Dfa& d = *g.dfas[leaf.dfa];
  std::vector<std::string> texts = v.is_number() ? number_texts(v) : std::vector{v.dump()};
  if (v.is_number_float() && is_integral(v) && std::abs(v.get<double>()) < 9007199254740992.0)
    texts.push_back(std::to_string(static_cast<long long>(v.get<double>())));
  for (const auto& t : texts) {
    if (!d.matches(t)) continue;
    if (!leaf.counts_chars) return true;
    const uint32_t n = code_points(v.get<std::string>());
    if (n >= leaf.min_chars && n <= leaf.max_chars) return true;
  }
  return false;
}

}  // namespace

std::vector<json> accepted_values(const Grammar& g, uint32_t node,
                                  const std::vector<json>& candidates) {
  std::vector<uint32_t> leaves;
  leaves_of(g, node, leaves, 0);
  std::vector<json> out;
  for (const json& v : candidates) {
    if (v.is_object() || v.is_array()) continue;
    if (std::find(out.begin(), out.end(), v) != out.end()) continue;
    const bool ok = std::any_of(leaves.begin(), leaves.end(),
                                [&](uint32_t l) { return leaf_accepts(g, g.nodes[l], v); });
    if (ok) out.push_back(v);
  }
  return out;
}

std::vector<ValueLeaf> value_leaves(const std::vector<json>& values, size_t max_states) {
  std::vector<std::string> strings, scalars;
  std::vector<uint8_t> string_ids, scalar_ids;
  for (size_t i = 0; i < values.size(); ++i) {
    const json& v = values[i];
    const auto id = static_cast<uint8_t>(i);
    if (v.is_string()) {
      strings.push_back(v.get<std::string>());
      string_ids.push_back(id);
    } else if (v.is_number()) {
      scalars.push_back(number_spellings(v, is_integral(v)));
      scalar_ids.push_back(id);
    } else if (v.is_boolean() || v.is_null()) {
      scalars.push_back(v.dump());  // true, false, null: no regex syntax
      scalar_ids.push_back(id);
    } else {
      throw Error(ErrorCode::kInvalidArgument, "uniqueItems", "value leaves take scalars only");
    }
  }
  std::vector<ValueLeaf> out;
  RegexOptions ro;
  ro.max_states = max_states;
  if (!strings.empty()) {
    std::vector<RegexAlternative> alts;
    for (const auto& s : strings) alts.push_back({s, true});
    ro.json_string = true;
    out.push_back({Dfa::compile_labeled(alts, ro), std::move(string_ids)});
    ro.json_string = false;
  }
  if (!scalars.empty()) {
    std::vector<RegexAlternative> alts;
    for (const auto& s : scalars) alts.push_back({s, false});
    out.push_back({Dfa::compile_labeled(alts, ro), std::move(scalar_ids)});
  }
  return out;
}

}  // namespace nextok::constraint
