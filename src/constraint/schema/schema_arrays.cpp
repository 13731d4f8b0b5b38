// Arrays: prefixItems/items, item bounds, and uniqueItems.
#include "constraint/schema/schema_compiler_impl.hpp"

namespace nextok::constraint::schema_detail {

// uniqueItems: true on array n, exact where its items are a finite set of
// scalars: they become value leaves and the array tracks the ids it holds.
// Otherwise a strict error.
void Compiler::make_unique(GrammarNode& n, std::vector<Part> item_parts, const std::string& ptr) {
  if (n.items == kNoNode && n.prefix.empty()) return;
  if (!n.prefix.empty()) return unsupported(ptr, "uniqueItems: true with prefixItems");
  const auto candidates = finite_values(std::move(item_parts), 0);
  const bool scalars =
      candidates && std::none_of(candidates->begin(), candidates->end(),
                                 [](const json& v) { return v.is_object() || v.is_array(); });
  if (!scalars) {
    return unsupported(ptr,
                       "uniqueItems: true over items other than a finite set of scalars "
                       "(enum, const, boolean, null)");
  }
  const std::vector<json> values = accepted_values(g_, n.items, *candidates);
  if (values.size() > kMaxUniqueValues) {
    return unsupported(
        ptr, "uniqueItems: true over more than " + std::to_string(kMaxUniqueValues) + " values");
  }
  n.max_items = std::min(n.max_items, static_cast<uint32_t>(values.size()));
  n.unique = true;
  if (values.empty()) {
    n.items = kNoNode;
    return;
  }
  GrammarNode alt;
  alt.kind = NodeKind::kAnyOf;
  for (ValueLeaf& l : value_leaves(values, opt_.max_dfa_states)) {
    GrammarNode leaf;
    leaf.kind = NodeKind::kLeaf;
    leaf.dfa = add_dfa(std::move(l.dfa));
    leaf.value_ids = std::move(l.value_ids);
    alt.options.push_back(add(std::move(leaf)));
  }
  n.items = alt.options.size() == 1 ? alt.options[0] : add(std::move(alt));
}

uint32_t Compiler::array_node(std::vector<Part>& parts, size_t depth) {
  GrammarNode n;
  n.kind = NodeKind::kArray;
  size_t prefix_len = 0;
  // Per part: its prefix schemas and the schema for the items after them.
  struct Shape {
    const json* prefix = nullptr;
    std::string prefix_ptr;
    const json* rest = nullptr;
    std::string rest_ptr;
  };
  std::vector<Shape> shapes;
  std::string unique_at;         // where uniqueItems: true is, if anywhere
  std::optional<Part> contains;  // the one contains with minContains >= 1
  for (const auto& p : parts) {
    const json& j = *p.j;
    Shape s;
    if (auto it = j.find("prefixItems"); it != j.end()) {
      if (!it->is_array())
        fail(ErrorCode::kInvalidArgument, p.ptr + "/prefixItems", "prefixItems must be an array");
      s.prefix = &*it;
      s.prefix_ptr = p.ptr + "/prefixItems";
      if (auto r = j.find("items"); r != j.end()) {
        s.rest = &*r;
        s.rest_ptr = p.ptr + "/items";
      }
    } else if (auto items = j.find("items"); items != j.end()) {
      if (items->is_array()) {  // draft 4-2019: tuple form
        s.prefix = &*items;
        s.prefix_ptr = p.ptr + "/items";
        if (auto r = j.find("additionalItems"); r != j.end()) {
          s.rest = &*r;
          s.rest_ptr = p.ptr + "/additionalItems";
        }
      } else {
        s.rest = &*items;
        s.rest_ptr = p.ptr + "/items";
      }
    }
    if (s.prefix) prefix_len = std::max(prefix_len, s.prefix->size());
    if (auto it = j.find("minItems"); it != j.end())
      n.min_items = std::max(n.min_items, count_of(*it, p.ptr + "/minItems"));
    if (auto it = j.find("maxItems"); it != j.end())
      n.max_items = std::min(n.max_items, count_of(*it, p.ptr + "/maxItems"));
    if (auto it = j.find("uniqueItems"); it != j.end() && it->is_boolean() && it->get<bool>())
      unique_at = p.ptr + "/uniqueItems";
    if (auto it = j.find("contains"); it != j.end()) {
      uint32_t lo = 1;
      if (auto m = j.find("minContains"); m != j.end()) lo = count_of(*m, p.ptr + "/minContains");
      if (auto m = j.find("maxContains"); m != j.end()) {
        // Counting at most k needs the items that do not match contains
        // told apart from those that do: a negation the matcher lacks.
        unsupported(p.ptr + "/maxContains", "maxContains");
      }
      if (lo > 0 && contains) {
        unsupported(p.ptr + "/contains", "contains in several allOf parts");
      } else if (lo > 0) {
        contains = Part{&*it, p.ptr + "/contains", 0};
        n.min_contains = lo;
      }
    }
    shapes.push_back(std::move(s));
  }
  auto item_parts = [&](size_t i) {
    std::vector<Part> out;
    for (const auto& s : shapes) {
      if (s.prefix && i < s.prefix->size()) {
        out.push_back({&(*s.prefix)[i], s.prefix_ptr + "/" + std::to_string(i), 0});
      } else if (s.rest) {
        out.push_back({s.rest, s.rest_ptr, 0});
      }
    }
    return out;
  };
  for (size_t i = 0; i < prefix_len && i < n.max_items; ++i) {
    const uint32_t v = conj(item_parts(i), depth + 1);
    if (is_never(v)) {
      n.max_items = static_cast<uint32_t>(i);
      break;
    }
    n.prefix.push_back(v);
  }
  if (n.prefix.size() == prefix_len) {
    const uint32_t r = conj(item_parts(prefix_len), depth + 1);
    n.items = is_never(r) ? kNoNode : r;
  }
  if (n.items == kNoNode)
    n.max_items = std::min<uint32_t>(n.max_items, static_cast<uint32_t>(n.prefix.size()));
  if (contains) {
    if (!unique_at.empty()) {
      unsupported(unique_at, "uniqueItems: true with contains");
      unique_at.clear();
    }
    // An item read through these nodes counts; the others may match
    // contains too, which only undercounts, so minContains stays exact.
    auto with_contains = [&](size_t i) {
      auto parts_i = item_parts(i);
      parts_i.push_back(*contains);
      const uint32_t v = conj(std::move(parts_i), depth + 1);
      return is_never(v) ? kNoNode : v;
    };
    for (size_t i = 0; i < n.prefix.size(); ++i) n.prefix_contains.push_back(with_contains(i));
    if (n.items != kNoNode) n.items_contains = with_contains(prefix_len);
    const auto usable = [&](uint32_t v) { return v != kNoNode; };
    if (contains_supply(n, 0, n.min_contains, usable) < n.min_contains) return never();
  }
  if (!unique_at.empty() && n.max_items > 1) make_unique(n, item_parts(prefix_len), unique_at);
  if (n.min_items > n.max_items) return never();
  return add(std::move(n));
}

}  // namespace nextok::constraint::schema_detail
