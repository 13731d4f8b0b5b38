#include "constraint/cfg/lark_dialect.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "nextok/error.hpp"
#include "vocab/utf8.hpp"

namespace nextok::constraint::cfg::lark {

bool is_count_brace(std::string_view src, size_t pos) {
  size_t digits = 0, commas = 0;
  for (size_t k = pos + 1; k < src.size() && src[k] != '}'; ++k) {
    const char c = src[k];
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == ',') {
      ++commas;
    } else if (c != ' ') {
      return false;
    }
  }
  return digits > 0 && commas <= 1;
}

size_t json_object_end(std::string_view src, size_t pos) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t k = pos; k < src.size(); ++k) {
    const char c = src[k];
    if (in_string) {
      if (c == '\\') {
        ++k;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return k + 1;
    }
  }
  return std::string_view::npos;
}

std::string read_llguidance_options(std::string_view options, LlguidanceOptions& out) {
  nlohmann::json opts;
  try {
    opts = nlohmann::json::parse(options);
  } catch (const nlohmann::json::exception&) {
    return "%llguidance needs a JSON object of options";
  }
  if (!opts.is_object()) return "%llguidance needs a JSON object of options";
  for (const auto& [k, v] : opts.items()) {
    const bool flag = k == "no_forcing" || k == "ignore_once" || k == "allow_initial_skip" ||
                      k == "allow_invalid_utf8";
    if (flag && !v.is_boolean()) {
      return "the %llguidance option " + k + " takes true or false, not " + v.dump();
    }
    // No token is forced here, and UTF-8 is always enforced. An ignored
    // run at the start is read with or without allow_initial_skip
    // (docs/constraint-engine.md, "llguidance's dialect").
    if (k == "ignore_once") out.ignore_once = v.get<bool>();
    if (k == "allow_invalid_utf8" && v.get<bool>()) {
      return "the %llguidance option allow_invalid_utf8=true is not supported";
    }
    if (k == "skip_repetition" && v != "repeat") {
      return "the %llguidance option skip_repetition=" + v.dump() + " is not supported";
    }
  }
  return {};
}

std::vector<uint32_t> token_ids(std::string_view body, std::string& error) {
  std::vector<uint32_t> ids;
  if (body.find_first_of("^*") != std::string_view::npos) {
    error = "token ranges with ^ or * would take text tokens: name special tokens only";
    return {};
  }
  constexpr uint64_t kMax = uint64_t{1} << 24;
  size_t k = 0;
  const auto number = [&](uint64_t& v) {
    const size_t from = k;
    v = 0;
    while (k < body.size() && body[k] >= '0' && body[k] <= '9' && v < kMax)
      v = v * 10 + static_cast<uint64_t>(body[k++] - '0');
    return k > from && v < kMax;
  };
  for (;;) {
    while (k < body.size() && body[k] == ' ') ++k;
    uint64_t lo = 0, hi = 0;
    if (!number(lo)) return error = "expecting a token id in <[...]>", std::vector<uint32_t>{};
    hi = lo;
    if (k < body.size() && body[k] == '-' && (++k, !number(hi))) {
      return error = "expecting a token id in <[...]>", std::vector<uint32_t>{};
    }
    if (hi < lo || ids.size() + (hi - lo) >= 65536) {
      return error = "a token range out of order or over 65,536 ids", std::vector<uint32_t>{};
    }
    for (uint64_t id = lo; id <= hi; ++id) ids.push_back(static_cast<uint32_t>(id));
    while (k < body.size() && body[k] == ' ') ++k;
    if (k == body.size()) return ids;
    if (body[k] != ',') return error = "expecting ',' in <[...]>", std::vector<uint32_t>{};
    ++k;
  }
}

namespace {

// 0 word, 1 space, 2 other: llguidance's word split (Unicode \\w and \\s).
int char_kind(const std::string& ch) {
  static const Dfa word = Dfa::compile("\\w", RegexOptions{.python = true});
  static const Dfa space = Dfa::compile("\\s", RegexOptions{.python = true});
  return word.matches(ch) ? 0 : space.matches(ch) ? 1 : 2;
}

}  // namespace

std::vector<std::string> substring_chunks(std::string_view json, std::string& error) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception&) {
    error = "%regex needs a JSON object";
    return {};
  }
  std::vector<std::string> out;
  if (!j.is_object() || j.size() != 1) {
    error = "%regex takes one of substring_words, substring_chars, substring_chunks";
    return {};
  }
  const auto it = j.begin();  // (not items(): its proxy is a temporary)
  const std::string key = it.key();
  const nlohmann::json& v = it.value();
  if (key == "substring_chunks" && v.is_array()) {
    for (const auto& c : v) {
      if (!c.is_string()) break;
      out.push_back(c.get<std::string>());
    }
    if (out.size() == v.size()) return out;
  } else if ((key == "substring_words" || key == "substring_chars") && v.is_string()) {
    const std::string text = v.get<std::string>();
    int last = -1;
    for (size_t k = 0; k < text.size();) {
      const size_t from = k;
      vocab::utf8_next(text, k);
      const std::string ch = text.substr(from, k - from);
      const int kind = key == "substring_chars" ? -2 : char_kind(ch);
      if (kind >= 0 && kind == last) {
        out.back() += ch;
      } else {
        out.push_back(ch);
      }
      last = kind;
    }
    return out;
  }
  error =
      "%regex takes one of substring_words, substring_chars (a string), substring_chunks "
      "(strings)";
  return {};
}

Dfa substring_dfa(const std::vector<std::string>& chunks, size_t max_states) {
  std::string text;
  std::vector<uint8_t> boundary{1};
  for (const auto& c : chunks) {
    text += c;
    boundary.resize(text.size() + 1, 0);
    boundary[text.size()] = 1;
  }
  // A state: the positions of `text` the bytes so far can end at (each a
  // run of chunks begun at a boundary). Start: every boundary.
  std::vector<uint32_t> start;
  for (uint32_t p = 0; p < boundary.size(); ++p)
    if (boundary[p]) start.push_back(p);
  std::map<std::vector<uint32_t>, int32_t> ids{{start, 0}};
  std::vector<std::vector<uint32_t>> states{start};
  std::vector<int32_t> table;
  std::vector<uint8_t> accepting;
  for (size_t k = 0; k < states.size(); ++k) {
    table.resize((k + 1) * 256, -1);
    accepting.push_back(0);
    for (uint32_t p : states[k]) accepting[k] |= boundary[p];
    std::map<uint8_t, std::vector<uint32_t>> next;
    for (uint32_t p : states[k])
      if (p < text.size()) next[static_cast<uint8_t>(text[p])].push_back(p + 1);
    for (auto& [b, to] : next) {
      auto [it, fresh] = ids.emplace(to, static_cast<int32_t>(states.size()));
      if (fresh) {
        if (states.size() >= max_states) {
          throw Error(ErrorCode::kInvalidArgument, "grammar",
                      "%regex substring automaton over " + std::to_string(max_states) + " states");
        }
        states.push_back(to);
      }
      table[k * 256 + b] = it->second;
    }
  }
  return Dfa::from_table(std::move(table), accepting);
}

}  // namespace nextok::constraint::cfg::lark
