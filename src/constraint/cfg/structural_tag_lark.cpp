#include "constraint/cfg/structural_tag_lark.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "constraint/cfg/xml_styles.hpp"
#include "constraint/regex/regex_parser.hpp"
#include "nextok/error.hpp"
#include "util/json_depth.hpp"

namespace nextok::constraint::cfg {

namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& at, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "structural_tag", at + ": " + why);
}

[[noreturn]] void unsupported(const std::string& at, const std::string& why) {
  throw Error(ErrorCode::kUnsupported, "structural_tag", at + ": " + why);
}

// A Lark string literal holding exactly `s` (the escapes lark evaluates).
std::string literal(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const std::vector<std::string> kNoEnds;

// XGrammar compiles a structural tag's JSON schemas in strict mode: an
// object that declares properties takes no other keys unless the schema
// says additionalProperties or unevaluatedProperties, and an array with
// prefixItems no more items unless it says items or unevaluatedItems. The
// same defaults, written into the schema (every subschema, by keyword).
void close_like_xgrammar(ordered& s) {
  if (!s.is_object()) return;
  const auto has = [&](const char* k) { return s.contains(k); };
  if (has("properties") && !has("additionalProperties") && !has("unevaluatedProperties"))
    s["additionalProperties"] = false;
  if (has("prefixItems") && !has("items") && !has("unevaluatedItems")) s["items"] = false;
  static const char* const kOne[] = {"additionalProperties",
                                     "items",
                                     "not",
                                     "if",
                                     "then",
                                     "else",
                                     "contains",
                                     "propertyNames",
                                     "unevaluatedItems",
                                     "unevaluatedProperties",
                                     "additionalItems"};
  static const char* const kList[] = {"prefixItems", "anyOf", "oneOf", "allOf"};
  static const char* const kMap[] = {"properties", "patternProperties", "$defs", "definitions",
                                     "dependentSchemas"};
  for (const char* k : kOne)
    if (const auto it = s.find(k); it != s.end()) close_like_xgrammar(*it);
  for (const char* k : kList)
    if (const auto it = s.find(k); it != s.end() && it->is_array())
      for (ordered& x : *it) close_like_xgrammar(x);
  for (const char* k : kMap)
    if (const auto it = s.find(k); it != s.end() && it->is_object())
      for (auto& [name, x] : it->items()) close_like_xgrammar(x);
}

class Translator {
 public:
  std::string run(const ordered& top) {
    if (!top.is_object()) bad("structural_tag", "must be an object");
    if (const ordered* type = field(top, "type"); type && *type != "structural_tag")
      bad("structural_tag.type", "must be \"structural_tag\"");
    std::string root;
    if (const ordered* f = field(top, "format")) {
      root = format(*f, "format", none());
    } else if (const ordered* s = field(top, "structures")) {
      root = legacy(*s, top.value("triggers", ordered::array()));
    } else {
      bad("structural_tag", "needs a 'format' (or the older 'structures' and 'triggers')");
    }
    std::string out = "start: " + root + "\n" + "ST_ANY: /(.|\\n)*/\n";
    for (const std::string& r : rules_) out += r + "\n";
    return out;
  }

 private:
  std::vector<std::string> rules_;
  size_t next_ = 0;

  std::string rule(const std::string& body) {
    const std::string name = "st" + std::to_string(next_++);
    rules_.push_back(name + ": " + body);
    return name;
  }

  // Text that holds none of `banned` nor of the non-empty `ends` (and any
  // text when there are none).
  std::string text(std::vector<std::string> banned, const std::vector<std::string>& ends) {
    for (const std::string& e : ends)
      if (!e.empty()) banned.push_back(e);
    const std::string name = "ST_TEXT" + std::to_string(next_++);
    std::string body = "ST_ANY";
    if (!banned.empty()) {
      body += " & ~(ST_ANY (";
      for (size_t i = 0; i < banned.size(); ++i) body += (i ? " | " : "") + literal(banned[i]);
      body += ") ST_ANY)";
    }
    rules_.push_back(name + ": " + body);
    return name;
  }

  // A present, non-null field: the JSON XGrammar's pydantic models dump
  // writes null for an option left unset.
  static const ordered* field(const ordered& f, const char* key) {
    const auto it = f.find(key);
    return it == f.end() || it->is_null() ? nullptr : &*it;
  }

  static const ordered& need(const ordered& f, const char* key, const std::string& at) {
    const ordered* v = field(f, key);
    if (!v) bad(at, std::string("needs '") + key + "'");
    return *v;
  }

  static std::string string_at(const ordered& v, const std::string& at) {
    if (!v.is_string()) bad(at, "must be a string");
    return v.get<std::string>();
  }

  // A list of non-empty strings (triggers, excludes); none when absent.
  static std::vector<std::string> strings(const ordered& f, const char* key,
                                          const std::string& at) {
    std::vector<std::string> out;
    const ordered* v = field(f, key);
    if (!v) return out;
    if (!v->is_array()) bad(at + "." + key, "must be an array of strings");
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string where = at + "." + key + "[" + std::to_string(i) + "]";
      out.push_back(string_at((*v)[i], where));
      if (out.back().empty()) bad(where, "must not be empty");
    }
    return out;
  }

  static bool flag(const ordered& f, const char* key, const std::string& at) {
    const ordered* v = field(f, key);
    if (!v) return false;
    if (!v->is_boolean()) bad(at + "." + key, "must be a boolean");
    return v->get<bool>();
  }

  // The end strings of the tag whose content a format is part of, as
  // XGrammar reads them (its verdicts in structural_tag_grammar_test.cpp):
  // any text stops at them through sequences (any element), alternatives
  // and optionals; triggered tags' text only where nothing of the content
  // follows it; neither inside a repetition.
  struct Ends {
    const std::vector<std::string>& any;
    const std::vector<std::string>& last;
  };
  static Ends none() { return {kNoEnds, kNoEnds}; }

  std::string format(const ordered& f, const std::string& at, Ends ends) {
    if (!f.is_object()) bad(at, "must be an object");
    const std::string type = string_at(need(f, "type", at), at + ".type");
    if (type == "const_string")
      return rule(literal(string_at(need(f, "value", at), at + ".value")));
    if (type == "json_schema") return json_schema(f, at, nullptr);
    if (type == "qwen_xml_parameter") return json_schema(f, at, "qwen_xml");
    if (type == "regex") return regex(f, at);
    if (type == "grammar") {
      const std::string g = string_at(need(f, "grammar", at), at + ".grammar");
      return rule("%gbnf " + ordered{{"grammar", g}, {"name", at + ".grammar"}}.dump());
    }
    if (type == "any_text") {
      if (field(f, "max_tokens") || field(f, "max_chars"))
        unsupported(at, "any_text with max_tokens or max_chars");
      return rule(text(strings(f, "excludes", at), ends.any));
    }
    if (type == "sequence" || type == "or") {
      const ordered& els = need(f, "elements", at);
      if (!els.is_array() || els.empty()) bad(at + ".elements", "must be a non-empty array");
      std::string body;
      for (size_t i = 0; i < els.size(); ++i) {
        body += i == 0 ? "" : type == "or" ? " | " : " ";
        const bool last = type == "or" || i + 1 == els.size();
        body += format(els[i], at + ".elements[" + std::to_string(i) + "]",
                       {ends.any, last ? ends.last : kNoEnds});
      }
      return rule(body);
    }
    if (type == "optional" || type == "plus" || type == "star") {
      const std::string inner =
          format(need(f, "content", at), at + ".content", type == "optional" ? ends : none());
      return rule("(" + inner + ")" + (type == "optional" ? "?" : type == "plus" ? "+" : "*"));
    }
    if (type == "repeat") return repeat(f, at);
    if (type == "tag") return tag(f, at);
    if (type == "triggered_tags") return triggered(f, at, ends.last);
    if (type == "tags_with_separator") return separated(f, at);
    if (type == "dispatch") return dispatch(f, at);
    static const char* const kOthers[] = {"token", "exclude_token", "any_tokens",
                                          "token_triggered_tags", "token_dispatch"};
    for (const char* o : kOthers)
      if (type == o) unsupported(at, "the format '" + type + "' is not supported");
    bad(at + ".type", "unknown format '" + type + "'");
  }

  // The schema as a %json rule; the style (XML parameters instead of a
  // JSON object), any_order and a whitespace bound go in as nextok's
  // x-nextok options of %json.
  std::string json_schema(const ordered& f, const std::string& at, const char* style_name) {
    const ordered& given = need(f, "json_schema", at);
    if (!given.is_object() && !given.is_boolean())
      bad(at + ".json_schema", "must be a schema (an object or a boolean)");
    ordered schema = given.is_object()   ? given
                     : given.get<bool>() ? ordered::object()
                                         : ordered{{"not", ordered::object()}};
    ordered opts = ordered::object();
    if (style_name) opts["style"] = style_name;
    if (const ordered* style = field(f, "style")) {
      if (!style->is_string() || !is_json_style(style->get<std::string>()))
        unsupported(at + ".style", "the style " + style->dump() + " is not supported (" +
                                       std::string(kJsonStyleNames) + ")");
      opts["style"] = *style;
    }
    if (flag(f, "any_order", at)) opts["any_order"] = true;
    if (!strings(f, "excludes", at).empty())
      unsupported(at + ".excludes", "excludes in JSON content are not supported");
    if (const ordered* ws = field(f, "max_whitespace_cnt")) {
      if (!ws->is_number_integer() || ws->get<long long>() < 1)
        bad(at + ".max_whitespace_cnt", "must be a positive integer");
      if (ws->get<long long>() > 255)
        unsupported(at + ".max_whitespace_cnt", "must be at most 255");
      opts["max_whitespace"] = *ws;
    }
    close_like_xgrammar(schema);
    if (!opts.empty()) schema["x-nextok"] = opts;
    return rule("%json " + schema.dump());
  }

  // XGrammar reads an ECMAScript-style pattern that the whole content
  // matches: \d, \w and \s are ASCII, '.' is any character (a newline
  // too), a '^' first and a '$' last change nothing. As a Lark terminal:
  // Python syntax with the a and s flags, '/' and line breaks escaped.
  std::string regex(const ordered& f, const std::string& at) {
    std::string p = string_at(need(f, "pattern", at), at + ".pattern");
    if (!p.empty() && p[0] == '^') p.erase(0, 1);
    size_t slashes = 0;  // backslashes before the last character
    for (size_t k = p.size(); k >= 2 && p[k - 2] == '\\'; --k) ++slashes;
    if (!p.empty() && p.back() == '$' && slashes % 2 == 0) p.pop_back();
    try {  // its errors named here, not at a place in the Lark text
      (void)regex::parse("(?as)" + p, regex::Syntax{.unicode = true, .python = true});
    } catch (const Error& e) {
      throw Error(e.code(), "structural_tag", at + ".pattern: " + e.what());
    }
    // An escaped character stays escaped; a raw or escaped line break
    // becomes \n or \r (the same character to the regex, and the Lark
    // literal stays on one line).
    std::string body = "/(?as)";
    for (size_t k = 0; k < p.size(); ++k) {
      const bool escaped = p[k] == '\\' && k + 1 < p.size();
      const char c = escaped ? p[++k] : p[k];
      if (c == '\n') {
        body += "\\n";
      } else if (c == '\r') {
        body += "\\r";
      } else if (escaped) {
        body += '\\';
        body += c;
      } else {
        body += c == '/' ? "\\/" : std::string(1, c);
      }
    }
    return rule(body + "/");
  }

  std::string repeat(const ordered& f, const std::string& at) {
    const auto bound = [&](const char* key) {
      const ordered& v = need(f, key, at);
      if (!v.is_number_integer()) bad(at + "." + key, "must be an integer");
      return v.get<long long>();
    };
    const long long lo = bound("min"), hi = bound("max");
    if (lo < 0 || (hi != -1 && hi < lo) || hi > 100000 || lo > 100000)
      bad(at, "min and max must satisfy 0 <= min <= max (max -1: no limit), at most 100000");
    const std::string inner = format(need(f, "content", at), at + ".content", none());
    std::string body = "(";
    body += inner;
    body += "){";
    body += std::to_string(lo);
    body += ',';
    if (hi >= 0) body += std::to_string(hi);
    body += '}';
    return rule(body);
  }

  struct Tag {
    std::string begin, rule;
  };

  Tag tag_parts(const ordered& f, const std::string& at) {
    if (!f.is_object()) bad(at, "must be an object");
    if (const ordered* t = field(f, "type"); t && *t != "tag") bad(at + ".type", "must be \"tag\"");
    const ordered& b = need(f, "begin", at);
    if (!b.is_string()) unsupported(at + ".begin", "a token as a begin tag is not supported");
    const ordered& e = need(f, "end", at);
    std::vector<std::string> ends;
    if (e.is_string()) {
      ends.push_back(e.get<std::string>());
    } else if (e.is_array() && !e.empty()) {
      for (size_t i = 0; i < e.size(); ++i)
        ends.push_back(string_at(e[i], at + ".end[" + std::to_string(i) + "]"));
    } else if (e.is_object()) {
      unsupported(at + ".end", "a token as an end tag is not supported");
    } else {
      bad(at + ".end", "must be a string or a non-empty array of strings");
    }
    const std::string content = format(need(f, "content", at), at + ".content", {ends, ends});
    std::string end_expr;
    for (size_t i = 0; i < ends.size(); ++i) end_expr += (i ? " | " : "") + literal(ends[i]);
    const std::string begin = b.get<std::string>();
    return {begin, rule(literal(begin) + " " + content + " (" + end_expr + ")")};
  }

  std::string tag(const ordered& f, const std::string& at) { return tag_parts(f, at).rule; }

  std::string tags_choice(const ordered& f, const std::string& at,
                          std::vector<std::string>* begins) {
    const ordered& tags = need(f, "tags", at);
    if (!tags.is_array() || tags.empty()) bad(at + ".tags", "must be a non-empty array of tags");
    std::string body;
    for (size_t i = 0; i < tags.size(); ++i) {
      Tag t = tag_parts(tags[i], at + ".tags[" + std::to_string(i) + "]");
      if (begins) begins->push_back(t.begin);
      body += (i ? " | " : "") + t.rule;
    }
    return rule(body);
  }

  // Free text, where a trigger may only begin one of the tags; as a tag's
  // content, the text also stops at that tag's end.
  std::string triggered(const ordered& f, const std::string& at,
                        const std::vector<std::string>& ends) {
    const std::vector<std::string> triggers = strings(f, "triggers", at);
    if (triggers.empty()) bad(at + ".triggers", "needs at least one trigger");
    std::vector<std::string> begins;
    const std::string tags = tags_choice(f, at, &begins);
    for (size_t i = 0; i < begins.size(); ++i) {
      bool found = false;
      for (const std::string& t : triggers) found = found || begins[i].starts_with(t);
      if (!found)
        bad(at + ".tags[" + std::to_string(i) + "].begin", "no trigger is a prefix of it");
    }
    std::vector<std::string> banned = triggers;
    for (const std::string& e : strings(f, "excludes", at)) banned.push_back(e);
    const std::string free = text(std::move(banned), ends);
    const bool one = flag(f, "at_least_one", at), first = flag(f, "stop_after_first", at);
    if (one && first) return rule(tags);
    if (first) return rule(free + " " + tags + "?");
    if (one) return rule(tags + " " + free + " (" + tags + " " + free + ")*");
    return rule(free + " (" + tags + " " + free + ")*");
  }

  std::string separated(const ordered& f, const std::string& at) {
    const std::string tags = tags_choice(f, at, nullptr);
    const std::string sep = literal(string_at(need(f, "separator", at), at + ".separator"));
    const bool one = flag(f, "at_least_one", at), first = flag(f, "stop_after_first", at);
    if (one && first) return rule(tags);
    if (first) return rule(tags + "?");
    const std::string list = tags + " (" + sep + " " + tags + ")*";
    return rule(one ? list : "(" + list + ")?");
  }

  // Free text until a rule's pattern, then that rule's format; with loop
  // (the default) free text again after it. The text holds no pattern nor
  // `excludes`; unlike any_text it does not stop at an enclosing tag's end
  // (XGrammar's reading: put the end in excludes).
  std::string dispatch(const ordered& f, const std::string& at) {
    const ordered& rules = need(f, "rules", at);
    if (!rules.is_array() || rules.empty()) bad(at + ".rules", "must be a non-empty array");
    std::vector<std::string> banned;
    std::string alts;
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string where = at + ".rules[" + std::to_string(i) + "]";
      const ordered& r = rules[i];
      if (!r.is_array() || r.size() != 2) bad(where, "must be a [pattern, format] pair");
      banned.push_back(string_at(r[0], where + "[0]"));
      if (banned.back().empty()) bad(where + "[0]", "must not be empty");
      alts += (i ? " | " : "") + literal(banned.back()) + " " + format(r[1], where + "[1]", none());
    }
    const ordered* loop = field(f, "loop");
    if (loop && !loop->is_boolean()) bad(at + ".loop", "must be a boolean");
    for (const std::string& e : strings(f, "excludes", at)) banned.push_back(e);
    const std::string free = text(std::move(banned), kNoEnds);
    if (loop && !loop->get<bool>()) return rule(free + " (" + alts + ")?");
    return rule(free + " ((" + alts + ") " + free + ")*");
  }

  // {"structures": [{"begin", "schema", "end"}], "triggers": [...]}: the
  // triggered tags of the new format, each a JSON schema.
  std::string legacy(const ordered& structures, const ordered& triggers) {
    if (!structures.is_array() || structures.empty())
      bad("structures", "must be a non-empty array");
    ordered tags = ordered::array();
    for (size_t i = 0; i < structures.size(); ++i) {
      const std::string at = "structures[" + std::to_string(i) + "]";
      const ordered& s = structures[i];
      if (!s.is_object()) bad(at, "must be an object");
      tags.push_back(
          {{"type", "tag"},
           {"begin", need(s, "begin", at)},
           {"content", {{"type", "json_schema"}, {"json_schema", need(s, "schema", at)}}},
           {"end", need(s, "end", at)}});
    }
    ordered f = {{"type", "triggered_tags"}, {"triggers", triggers}, {"tags", tags}};
    return triggered(f, "structural_tag", {});
  }
};

}  // namespace

std::string structural_tag_to_lark(std::string_view json_text) {
  // The translation recurses once per nested format.
  constexpr size_t kMaxDepth = 64;
  if (util::json_depth(json_text, kMaxDepth) > kMaxDepth)
    bad("structural_tag", "nests deeper than " + std::to_string(kMaxDepth) + " levels");
  ordered top;
  try {
    top = ordered::parse(json_text);
  } catch (const json::exception& e) {
    bad("structural_tag", std::string("not valid JSON: ") + e.what());
  }
  return Translator().run(top);
}

}  // namespace nextok::constraint::cfg
