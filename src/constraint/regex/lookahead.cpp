#include "constraint/regex/lookahead.hpp"

namespace nextok::constraint::regex {

namespace {

// The index just past the class starting at p[i] == '[', or npos.
size_t class_end(std::string_view p, size_t i, bool python) {
  ++i;
  if (i < p.size() && p[i] == '^') ++i;
  if (python && i < p.size() && p[i] == ']') ++i;  // a leading ']' is literal there
  for (; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
    } else if (p[i] == ']') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Walks p from `i` at depth 0; stops at the ')' closing depth 0 (returns its
// index) or at the end (returns p.size()); `bar` is set when a '|' stands at
// depth 0. npos on unbalanced text (the parser reports it).
size_t scan(std::string_view p, size_t i, bool python, bool& bar) {
  int depth = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '[') {
      i = class_end(p, i, python);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') {
      if (depth == 0) return i;
      --depth;
    }
    if (c == '|' && depth == 0) bar = true;
    ++i;
  }
  return depth == 0 ? p.size() : std::string_view::npos;
}

}  // namespace

std::optional<LeadingLookaheads> split_leading_lookaheads(std::string_view pattern, bool python) {
  LeadingLookaheads out;
  size_t i = 1;
  if (!pattern.starts_with('^')) return std::nullopt;
  while (pattern.substr(i).starts_with("(?=") || pattern.substr(i).starts_with("(?!")) {
    bool bar = false;
    const size_t close = scan(pattern, i + 3, python, bar);
    if (close == std::string_view::npos || close >= pattern.size()) return std::nullopt;
    out.tests.push_back({pattern[i + 2] == '!', pattern.substr(i + 3, close - i - 3)});
    i = close + 1;
  }
  if (out.tests.empty()) return std::nullopt;
  out.rest = pattern.substr(i);
  bool bar = false;
  if (scan(out.rest, 0, python, bar) != out.rest.size() || bar) return std::nullopt;
  return out;
}

}  // namespace nextok::constraint::regex
