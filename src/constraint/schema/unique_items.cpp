#include "constraint/schema/unique_items.hpp"

#include <algorithm>
#include <cmath>

#include "nextok/error.hpp"

namespace nextok::constraint {

using nlohmann::json;

bool is_integral(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

std::string number_spellings(const json& v, bool integral) {
  if (integral && std::abs(v.get<double>()) < 9007199254740992.0) {
    const auto i = static_cast<long long>(v.get<double>());
    const std::string digits = std::to_string(i < 0 ? -i : i);
    return (i < 0 ? "-" : i == 0 ? "-?" : "") + digits + "(\\.0+)?";
  }
  std::string text = v.dump();
  if (text.find_first_of("eE") != std::string::npos) {
    std::string out;  // escape the regex specials of a number text
    for (char c : text) {
      if (c == '.' || c == '+') out += '\\';
      out += c;
    }
    return out;
  }
  std::string out;
  for (char c : text) {
    if (c == '.') out += '\\';
    out += c;
  }
  return text.find('.') == std::string::npos ? out : out + "0*";
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

uint32_t code_points(const std::string& s) {
  uint32_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool leaf_accepts(const Grammar& g, const GrammarNode& leaf, const json& v) {
  const Dfa& d = *g.dfas[leaf.dfa];
  std::vector<std::string> texts{v.dump()};
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
