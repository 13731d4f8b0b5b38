// libFuzzer target for the constraint matcher on fixed schemas: the first
// input byte picks one of the schemas below (and compact or default
// whitespace), the rest is a byte stream read by JsonConstraint. Checked:
//   - accepts_bytes(prefix) is monotone: once false, false for longer ones;
//   - stepping byte by byte (single-byte tokens) agrees with accepts_bytes,
//     the mask's bit for that byte, and every multi-byte token spelled at
//     that position; is_complete() agrees with completes_with() and with
//     the EOS bit;
//   - a few random set bits advance(), a few random clear non-EOS bits throw
//     Error{kInvalidArgument} and leave the state unchanged;
//   - every prefix the matcher calls complete parses with nlohmann::json and
//     passes hand-written checks of that schema;
//   - rollback() and clone() give back the masks seen before.
// Build with -DNEXTOK_FUZZ=ON and clang (see tests/fuzz/CMakeLists.txt);
// run: matcher_fuzz -dict=tests/fuzz/json_schema.dict tests/fuzz/corpus/matcher
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_vocab.hpp"
#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"

namespace {

using nextok::JsonConstraint;
using nextok::JsonGrammar;
using nlohmann::json;

constexpr size_t kMaxStream = 256;

// The schemas; kAnyObject stands for JsonGrammar::any_object.
constexpr const char* kAnyObject = "json_object";
const char* const kSchemas[] = {
    // 0: object, required and optional properties, closed
    R"({"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":8},
        "age":{"type":"integer","minimum":0,"maximum":150},
        "email":{"type":"string","format":"email"}},
        "required":["name","age"],"additionalProperties":false})",
    // 1: array of an enum, 1..3 items
    R"({"type":"array","items":{"enum":["red","green","blue"]},"minItems":1,"maxItems":3})",
    // 2: oneOf with const discriminators
    R"({"oneOf":[
        {"type":"object","properties":{"kind":{"const":"circle"},
         "radius":{"type":"number","exclusiveMinimum":0}},
         "required":["kind","radius"],"additionalProperties":false},
        {"type":"object","properties":{"kind":{"const":"square"},
         "side":{"type":"integer","minimum":1}},
         "required":["kind","side"],"additionalProperties":false}]})",
    // 3: recursion through $ref
    R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
        "children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":3}},
        "required":["value"],"additionalProperties":false}},"$ref":"#/$defs/node"})",
    // 4: pattern and string lengths
    R"({"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"},
        "tag":{"type":"string","minLength":2,"maxLength":5}},
        "required":["code"],"additionalProperties":false})",
    // 5: formats; other properties allowed
    R"({"type":"object","properties":{"d":{"type":"string","format":"date"},
        "t":{"type":"string","format":"time"},"u":{"type":"string","format":"uuid"}},
        "required":["d","u"]})",
    // 6: number ranges
    R"({"type":"object","properties":{"i":{"type":"integer","minimum":-5,"maximum":12},
        "x":{"type":"number","minimum":-1.5,"exclusiveMaximum":100},
        "n":{"type":"integer","exclusiveMinimum":1000}},
        "required":["i","x"],"additionalProperties":false})",
    // 7: enum of mixed values
    R"({"enum":[1,"a",null,true,{"k":[1,2]},2.5,[]]})",
    // 8: anyOf of types with bounds
    R"({"anyOf":[{"type":"string","minLength":3,"maxLength":4},
        {"type":"integer","maximum":-10},{"type":"null"}]})",
    // 9: json_object
    kAnyObject,
};
constexpr size_t kNumSchemas = sizeof(kSchemas) / sizeof(kSchemas[0]);

struct Env {
  std::shared_ptr<const nextok::TokenIndex> index;
  std::shared_ptr<const JsonGrammar> grammars[kNumSchemas][2];  // [schema][compact]
  uint32_t byte_token[256] = {};
  std::map<std::string, uint32_t, std::less<>> multi;  // multi-byte tokens by bytes
  size_t max_token_len = 1;
};

const Env& env() {
  static const Env e = [] {
    Env e;
    e.index = nextok_fuzz::fuzz_index();
    for (size_t s = 0; s < kNumSchemas; ++s) {
      for (int compact = 0; compact < 2; ++compact) {
        nextok::JsonConstraintOptions opt;
        opt.max_whitespace = compact ? 0 : 20;
        try {
          e.grammars[s][compact] = kSchemas[s] == kAnyObject
                                       ? JsonGrammar::any_object(e.index, opt)
                                       : JsonGrammar::from_schema(e.index, kSchemas[s], opt);
        } catch (const nextok::Error& err) {
          std::fprintf(stderr, "matcher_fuzz: schema %zu does not compile: %s\n", s, err.what());
          std::abort();
        }
      }
    }
    const nextok::Vocabulary& v = e.index->vocab();
    bool have[256] = {};
    for (uint32_t t = 0; t < v.size(); ++t) {
      if (v.is_special(t) || v.is_eos(t)) continue;
      const std::string_view b = v.bytes(t);
      if (b.size() == 1 && !have[static_cast<unsigned char>(b[0])]) {
        have[static_cast<unsigned char>(b[0])] = true;
        e.byte_token[static_cast<unsigned char>(b[0])] = t;
      } else if (b.size() > 1) {
        e.multi.emplace(std::string(b), t);
        e.max_token_len = std::max(e.max_token_len, b.size());
      }
    }
    for (bool h : have) {
      if (!h) {
        std::fprintf(stderr, "matcher_fuzz: the vocabulary lacks a single-byte token\n");
        std::abort();
      }
    }
    return e;
  }();
  return e;
}

std::string g_doc;  // for messages
size_t g_schema = 0;

[[noreturn]] void fail(const char* what, size_t pos, uint32_t token = 0) {
  const bool skip = nextok_fuzz::skipped(what);
  if (skip && !nextok_fuzz::log_skipped()) throw nextok_fuzz::Skipped{};
  std::fprintf(stderr, "matcher_fuzz: schema %zu: %s (byte %zu, token %u)\ntext: ", g_schema, what,
               pos, token);
  nextok_fuzz::print_escaped(stderr, g_doc);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  if (skip) throw nextok_fuzz::Skipped{};
  __builtin_trap();
}

// --- hand-written checks of the fixed schemas --------------------------------

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

double num(const json& v) {
  return v.get<double>();
}

bool keys_within(const json& o, std::initializer_list<const char*> keys) {
  for (const auto& [k, _] : o.items()) {
    bool found = false;
    for (const char* want : keys) found = found || k == want;
    if (!found) return false;
  }
  return true;
}

bool str_len(const json& v, size_t lo, size_t hi) {
  if (!v.is_string()) return false;
  const size_t n = code_points(v.get<std::string>());
  return n >= lo && n <= hi;
}

bool email_ok(const json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  const size_t at = s.find('@');
  return at != std::string::npos && at > 0 && at + 1 < s.size() && s.size() <= 254 &&
         s.find('@', at + 1) == std::string::npos;
}

bool digits(const std::string& s, size_t from, size_t n) {
  for (size_t i = from; i < from + n; ++i)
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
  return true;
}

int num_at(const std::string& s, size_t from, size_t n) {
  return std::stoi(s.substr(from, n));
}

bool date_ok(const json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  if (s.size() != 10 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' ||
      !digits(s, 8, 2))
    return false;
  const int y = num_at(s, 0, 4), m = num_at(s, 5, 2), d = num_at(s, 8, 2);
  if (y == 0 || m < 1 || m > 12 || d < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

bool time_ok(const json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  if (s.size() < 9 || !digits(s, 0, 2) || s[2] != ':' || !digits(s, 3, 2) || s[5] != ':' ||
      !digits(s, 6, 2))
    return false;
  if (num_at(s, 0, 2) > 23 || num_at(s, 3, 2) > 59 || num_at(s, 6, 2) > 59) return false;
  size_t i = 8;
  if (s[i] == '.') {
    const size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    return i + 6 == s.size() && digits(s, i + 1, 2) && s[i + 3] == ':' && digits(s, i + 4, 2) &&
           num_at(s, i + 1, 2) <= 23 && num_at(s, i + 4, 2) <= 59;
  }
  return false;
}

bool uuid_ok(const json& v) {
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  if (s.size() != 36) return false;
  for (size_t i = 0; i < 36; ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    const char c = s[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (dash ? c != '-' : !hex) return false;
  }
  return true;
}

bool node_ok(const json& n, int depth) {
  if (depth > 200 || !n.is_object() || !keys_within(n, {"value", "children"})) return false;
  if (!n.contains("value") || !is_integral(n["value"])) return false;
  if (n.contains("children")) {
    const json& c = n["children"];
    if (!c.is_array() || c.size() > 3) return false;
    for (const auto& child : c)
      if (!node_ok(child, depth + 1)) return false;
  }
  return true;
}

bool valid(size_t schema, const json& j) {
  switch (schema) {
    case 0:
      return j.is_object() && keys_within(j, {"name", "age", "email"}) && j.contains("name") &&
             j.contains("age") && str_len(j["name"], 1, 8) && is_integral(j["age"]) &&
             num(j["age"]) >= 0 && num(j["age"]) <= 150 &&
             (!j.contains("email") || email_ok(j["email"]));
    case 1: {
      if (!j.is_array() || j.empty() || j.size() > 3) return false;
      for (const auto& v : j)
        if (v != "red" && v != "green" && v != "blue") return false;
      return true;
    }
    case 2: {
      if (!j.is_object() || !j.contains("kind")) return false;
      if (j["kind"] == "circle")
        return keys_within(j, {"kind", "radius"}) && j.contains("radius") &&
               j["radius"].is_number() && num(j["radius"]) > 0;
      if (j["kind"] == "square")
        return keys_within(j, {"kind", "side"}) && j.contains("side") && is_integral(j["side"]) &&
               num(j["side"]) >= 1;
      return false;
    }
    case 3:
      return node_ok(j, 0);
    case 4: {
      if (!j.is_object() || !keys_within(j, {"code", "tag"}) || !j.contains("code")) return false;
      if (!j["code"].is_string()) return false;
      const std::string c = j["code"].get<std::string>();
      const bool code = c.size() == 6 && c[0] >= 'A' && c[0] <= 'Z' && c[1] >= 'A' && c[1] <= 'Z' &&
                        c[2] == '-' && digits(c, 3, 3);
      return code && (!j.contains("tag") || str_len(j["tag"], 2, 5));
    }
    case 5:
      return j.is_object() && j.contains("d") && j.contains("u") && date_ok(j["d"]) &&
             uuid_ok(j["u"]) && (!j.contains("t") || time_ok(j["t"]));
    case 6:
      return j.is_object() && keys_within(j, {"i", "x", "n"}) && j.contains("i") &&
             j.contains("x") && is_integral(j["i"]) && num(j["i"]) >= -5 && num(j["i"]) <= 12 &&
             j["x"].is_number() && num(j["x"]) >= -1.5 && num(j["x"]) < 100 &&
             (!j.contains("n") || (is_integral(j["n"]) && num(j["n"]) > 1000));
    case 7: {
      static const json kValues = json::parse(R"([1,"a",null,true,{"k":[1,2]},2.5,[]])");
      for (const auto& v : kValues)
        if (v == j) return true;
      return false;
    }
    case 8:
      return str_len(j, 3, 4) || (is_integral(j) && num(j) <= -10) || j.is_null();
    case 9:
      return j.is_object();
  }
  return false;
}

// Texts that nlohmann::json cannot judge exactly: numbers past double range
// or precision (16+ digits, 3-digit exponents), and lone surrogate escapes
// (RFC 8259 allows them; nlohmann rejects them).
bool beyond_nlohmann(std::string_view s) {
  bool in_string = false;
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        if (i + 2 < s.size() && s[i + 1] == 'u' && (s[i + 2] == 'd' || s[i + 2] == 'D'))
          return true;
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      run = 0;
      continue;
    }
    run = (c >= '0' && c <= '9') ? run + 1 : 0;
    if (run >= 16) return true;
    if (c == 'e' || c == 'E') {
      size_t j = i + 1, n = 0;
      if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++n;
      if (n >= 3) return true;
    }
  }
  return false;
}

void check_document(size_t schema, std::string_view text, size_t pos) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    if (beyond_nlohmann(text)) return;
    fail("complete document does not parse as JSON", pos);
  }
  if (!valid(schema, j) && !beyond_nlohmann(text)) fail("complete document fails the schema", pos);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)env();
  return 0;
}

namespace {

void one_input(const uint8_t* data, size_t size) {
  const Env& e = env();
  const nextok::Vocabulary& vocab = e.index->vocab();
  const size_t v = vocab.size();
  const size_t words = nextok::bitmask_words(v);
  const size_t schema = data[0] % kNumSchemas;
  const int compact = (data[0] / kNumSchemas) & 1;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1),
                                std::min(size - 1, kMaxStream));
  g_schema = schema;
  g_doc.assign(stream);
  nextok_fuzz::Rng rng{nextok_fuzz::fnv1a(stream) ^ data[0]};
  const auto& grammar = e.grammars[schema][compact];

  // accepts_bytes on every prefix, from the start: monotone.
  const JsonConstraint fresh(grammar);
  std::vector<bool> acc(stream.size() + 1);
  for (size_t k = 0; k <= stream.size(); ++k) {
    acc[k] = fresh.accepts_bytes(stream.substr(0, k));
    if (k > 0 && acc[k] && !acc[k - 1]) fail("accepts_bytes is not monotone", k);
  }
  if (!acc[0]) fail("accepts_bytes(\"\") is false", 0);

  JsonConstraint c(grammar);
  std::vector<std::vector<uint32_t>> masks;
  size_t i = 0;
  for (;; ++i) {
    masks.emplace_back(words, ~0u);
    std::vector<uint32_t>& mask = masks.back();
    c.step_mask(mask);
    const bool complete = c.is_complete();
    if (complete != fresh.completes_with(stream.substr(0, i)))
      fail("is_complete() != completes_with(prefix)", i);
    if (complete != c.completes_with("")) fail("is_complete() != completes_with(\"\")", i);
    for (uint32_t eos : vocab.eos_ids())
      if (nextok::bitmask_allows(mask, eos) != complete) fail("EOS bit != is_complete()", i, eos);
    for (size_t t = v; t < words * 32; ++t)
      if (nextok::bitmask_allows(mask, t)) fail("bit set past the vocabulary", i);
    // Every byte is a token, so a non-EOS bit is set iff some byte may follow.
    bool non_eos = false;
    for (uint32_t t = 0; t < v && !non_eos; ++t)
      non_eos = nextok::bitmask_allows(mask, t) && !vocab.is_eos(t);
    if (!non_eos && !complete) fail("dead end after allowed tokens", i);
    if (c.can_continue() != non_eos) fail("can_continue() != some token allowed", i);
    if (complete) check_document(schema, stream.substr(0, i), i);

    // Random set and clear bits against advance().
    for (int k = 0; k < 4; ++k) {
      const auto t = static_cast<uint32_t>(rng.below(v));
      if (vocab.is_eos(t)) continue;
      const bool bit = nextok::bitmask_allows(mask, t);
      if (bit && vocab.is_special(t)) fail("special token allowed", i, t);
      bool ok = true;
      try {
        c.advance(t);
      } catch (const nextok::Error& err) {
        if (err.code() != nextok::ErrorCode::kInvalidArgument) fail("wrong error code", i, t);
        ok = false;
      }
      if (ok) c.rollback(1);
      if (bit != ok) fail(bit ? "set bit rejected by advance()" : "clear bit accepted", i, t);
      if (c.steps() != i) fail("advance/rollback moved the state", i, t);
    }
    for (int k = 0; k < 4; ++k) {
      // a random set bit, found from a random start
      const size_t from = rng.below(v);
      for (size_t d = 0; d < v; ++d) {
        const auto t = static_cast<uint32_t>((from + d) % v);
        if (!nextok::bitmask_allows(mask, t) || vocab.is_eos(t)) continue;
        try {
          c.advance(t);
        } catch (const nextok::Error&) {
          fail("set bit rejected by advance()", i, t);
        }
        c.rollback(1);
        break;
      }
    }

    // Multi-byte tokens spelled at this position.
    const std::string_view rest = stream.substr(i);
    for (size_t len = 2; len <= std::min(rest.size(), e.max_token_len); ++len) {
      const auto it = e.multi.find(rest.substr(0, len));
      if (it == e.multi.end()) continue;
      const bool bit = nextok::bitmask_allows(mask, it->second);
      if (bit != acc[i + len]) fail("multi-byte token bit != accepts_bytes", i, it->second);
    }

    if (i == stream.size()) break;
    const uint32_t t = e.byte_token[static_cast<unsigned char>(stream[i])];
    const bool bit = nextok::bitmask_allows(mask, t);
    if (bit != acc[i + 1]) fail("byte token bit != accepts_bytes", i, t);
    if (bit != c.accepts_bytes(stream.substr(i, 1))) fail("accepts_bytes from here differs", i, t);
    if (!bit) {
      try {
        c.advance(t);
        fail("advance() took a cleared byte token", i, t);
      } catch (const nextok::Error& err) {
        if (err.code() != nextok::ErrorCode::kInvalidArgument) fail("wrong error code", i, t);
      }
      if (c.steps() != i) fail("a rejected advance moved the state", i, t);
      for (size_t k = i + 1; k <= stream.size(); ++k)
        if (acc[k]) fail("accepted past a rejected byte", k);
      break;
    }
    c.advance(t);
  }

  // EOS where complete; then rollback and clone give back the earlier masks.
  std::vector<uint32_t> m(words);
  if (c.is_complete() && !vocab.eos_ids().empty()) {
    c.advance(vocab.eos_ids()[0]);
    if (!c.finished() || c.can_continue()) fail("EOS did not finish", i);
    c.rollback(1);
  }
  const auto copy = c.clone();
  copy->step_mask(m);
  if (m != masks[i]) fail("clone() gives another mask", i);
  const size_t back = rng.below(i + 1);
  c.rollback(back);
  c.step_mask(m);
  if (m != masks[i - back]) fail("rollback() gives another mask", i - back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  try {
    one_input(data, size);
  } catch (const nextok_fuzz::Skipped&) {
  }
  return 0;
}
