#include "constraint/cfg/raw_text_automaton.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "util/substring_matcher.hpp"

namespace nextok::constraint::cfg {

namespace {

// The bytes a JSON string literal holds for the raw byte b (one spelling:
// the short escapes where JSON has them; the value DFAs take every
// spelling of a character, so one is enough).
std::string_view spelled(uint8_t b, char (&buf)[8]) {
  switch (b) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      break;
  }
  if (b < 0x20) {
    std::snprintf(buf, sizeof buf, "\\u%04x", b);
    return {buf, 6};
  }
  buf[0] = static_cast<char>(b);
  return {buf, 1};
}

int32_t walk(const Automaton& a, int32_t q, std::string_view bytes) {
  for (const char c : bytes) {
    if (q < 0) break;
    q = a.at(static_cast<size_t>(q), static_cast<uint8_t>(c));
  }
  return q;
}

bool closes(const Automaton& a, int32_t q) {
  if (q < 0) return false;
  const int32_t t = a.at(static_cast<size_t>(q), '"');
  return t >= 0 && a.accepting[static_cast<size_t>(t)];
}

}  // namespace

std::optional<Automaton> raw_values(const Automaton& json, std::string_view close,
                                    size_t max_states, RawPart part) {
  // A state reads on two ways at once: `lit`, the JSON text as written
  // (values that are not strings), and `str`, inside a string literal
  // (its opening quote read), with `k` bytes of `close` just read.
  struct Key {
    int32_t lit, str;
    uint32_t k;
    bool first;
    bool operator<(const Key& o) const {
      return std::tie(lit, str, k, first) < std::tie(o.lit, o.str, o.k, o.first);
    }
  };
  Automaton out;
  if (json.start < 0) return out;
  const util::SubstringMatcher m{std::string(close)};
  std::map<Key, int32_t> ids;
  const int32_t lit0 = part == RawPart::kStrings ? -1 : json.start;
  const int32_t str0 =
      part == RawPart::kOthers ? -1 : json.at(static_cast<size_t>(json.start), '"');
  if (lit0 < 0 && str0 < 0) return out;
  std::vector<Key> todo{{lit0, str0, 0, true}};
  ids.emplace(todo[0], 0);
  out.start = 0;
  char buf[8];
  for (size_t i = 0; i < todo.size(); ++i) {
    const Key s = todo[i];
    out.next.resize((i + 1) * 256, -1);
    out.accepting.push_back((s.lit >= 0 && json.accepting[static_cast<size_t>(s.lit)]) ||
                            closes(json, s.str));
    for (unsigned x = 0; x < 256; ++x) {
      const auto b = static_cast<uint8_t>(x);
      Key to{-1, -1, 0, false};
      // A quote first would begin a JSON string: that is the `str` way.
      if (s.lit >= 0 && !(s.first && b == '"')) to.lit = json.at(static_cast<size_t>(s.lit), b);
      if (s.str >= 0) {
        to.k = close.empty() ? 0 : m.next(s.k, b);
        if (close.empty() || to.k < close.size()) to.str = walk(json, s.str, spelled(b, buf));
        if (to.str < 0) to.k = 0;
      }
      if (to.lit < 0 && to.str < 0) continue;
      auto [it, fresh] = ids.emplace(to, static_cast<int32_t>(todo.size()));
      if (fresh) {
        if (todo.size() >= max_states) return std::nullopt;
        todo.push_back(to);
      }
      out.next[i * 256 + x] = it->second;
    }
  }
  out.states = todo.size();
  return out;
}

Automaton xml_names(const Automaton& json_keys) {
  Automaton out;
  if (json_keys.start < 0) return out;
  const auto name_char = [](uint8_t b, bool first) {
    const bool alpha = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_';
    return alpha || (!first && b >= '0' && b <= '9');
  };
  // (state inside the key literal, a character read): these characters
  // stand for themselves in a JSON string.
  std::map<std::pair<int32_t, bool>, int32_t> ids;
  std::vector<std::pair<int32_t, bool>> todo{
      {json_keys.at(static_cast<size_t>(json_keys.start), '"'), false}};
  if (todo[0].first < 0) return out;
  ids.emplace(todo[0], 0);
  out.start = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    const auto [q, started] = todo[i];
    out.next.resize((i + 1) * 256, -1);
    out.accepting.push_back(started && closes(json_keys, q));
    for (unsigned x = 0; x < 256; ++x) {
      const auto b = static_cast<uint8_t>(x);
      if (!name_char(b, !started)) continue;
      const int32_t t = json_keys.at(static_cast<size_t>(q), b);
      if (t < 0) continue;
      auto [it, fresh] = ids.emplace(std::pair{t, true}, static_cast<int32_t>(todo.size()));
      if (fresh) todo.emplace_back(t, true);
      out.next[i * 256 + x] = it->second;
    }
  }
  out.states = todo.size();
  return out;
}

}  // namespace nextok::constraint::cfg
