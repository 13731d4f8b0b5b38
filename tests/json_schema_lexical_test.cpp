// JSON lexical rules (RFC 8259) on unconstrained values (`{}` and
// json_object), the ConstraintEngine contract with real Llama-3.1 token ids
// (masks, EOS, advance, rollback, clone, reset), and hostile schemas that
// must fail cleanly and quickly.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json_schema_test_util.hpp"
#include "nextok/mask.hpp"

namespace {

using nextok::JsonConstraint;
using nextok::JsonGrammar;
using schema_test::compile;
using schema_test::error_of;
using schema_test::expect_schema;
using schema_test::expect_texts;
using schema_test::llama_index;
using schema_test::matches;
using schema_test::prefix_ok;
using schema_test::schema_error;

// --- strings ------------------------------------------------------------------

TEST(JsonSchemaLexical, StringEscapes) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema("{}",
                {R"("\"")", R"("\\")", R"("\/")", R"("\b\f\n\r\t")", R"("\u00e9\u00E9")",
                 R"("\u0000")", R"("\uffff")", R"("a\"b\\c")"},
                {R"("\a")", R"("\x41")", R"("\u12")", R"("\u12G4")", R"("\U0041")", R"("\")",
                 R"("\ ")", R"("\0")"});
}

TEST(JsonSchemaLexical, LoneSurrogateEscapesAreRejected) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema("{}", {R"("\ud800\udc00")", R"("\uD83D\uDE00")", R"("\udbff\udfff")"},
                {R"("\ud800")", R"("\udc00")", R"("\ud800x")", R"("\ud800\u0041")",
                 R"("\ud800\ud800")", R"("\udc00\ud800")", R"("\ud800\n")"});
}

TEST(JsonSchemaLexical, RawControlCharactersAreRejected) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema("{}", {"\"\x7f\"", "\"a b\""},
                {"\"a\x01"
                 "b\"",
                 "\"\n\"", "\"\t\"", "\"\r\"", "\"\x1f\""});
  // Not even as the first byte of a key.
  EXPECT_FALSE(prefix_ok("{}", "{\"\x01"));
}

TEST(JsonSchemaLexical, Utf8IsValidated) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema(
      "{}", {"\"\xC3\xA9\"", "\"\xF0\x9F\x98\x80\"", "\"\xF4\x8F\xBF\xBF\"", "\"\xEF\xBF\xBF\""},
      {"\"\xC3\"", "\"\xC0\x80\"", "\"\xC1\xBF\"", "\"\xE0\x80\xAF\"", "\"\xED\xA0\x80\"",
       "\"\xED\xBF\xBF\"", "\"\xF4\x90\x80\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xFF\"", "\"\x80\"",
       "\"\xE2\x82\""});
  EXPECT_FALSE(prefix_ok("{}",
                         "\"\xC3"
                         "a"));
  EXPECT_TRUE(prefix_ok("{}", "\"\xF0\x9F\x98"));  // a character may come in pieces
}

// --- numbers ------------------------------------------------------------------

TEST(JsonSchemaLexical, Numbers) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema("{}",
                {"0", "-0", "0.5", "-0.5", "1e10", "1E+2", "1e-2", "-0.0e-0", "123.456e-7",
                 "123456789012345678901234567890"},
                {"01", "-01", "00", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "NaN", "Infinity",
                 "-", "1.e5", "[1.]", "[-]", "[.5]"});
  EXPECT_TRUE(prefix_ok("{}", "-"));  // "-" alone is incomplete, not wrong
  EXPECT_FALSE(matches("{}", "-"));
  EXPECT_TRUE(prefix_ok("{}", "1."));
  EXPECT_FALSE(prefix_ok("{}", "."));
  EXPECT_FALSE(prefix_ok("{}", "01"));
  EXPECT_FALSE(prefix_ok("{}", "+"));
}

// --- whitespace ---------------------------------------------------------------

TEST(JsonSchemaLexical, WhitespaceRunsAreBounded) {
  SCHEMA_TEST_NEEDS_LLAMA();
  const std::string ws20(20, ' '), ws21(21, ' ');
  const std::string at20 = "[" + ws20 + "1" + ws20 + "," + ws20 + "2" + ws20 + "]";
  const std::string key20 = "{" + ws20 + R"("a")" + ws20 + ":" + ws20 + "1" + ws20 + "}";
  const std::string mixed = "{\n\t\"a\" :\r\n [ 1 ,\t2 ] }";
  expect_schema(
      "{}", {at20, key20, mixed, ws20 + "1"},
      {"[" + ws21 + "1]", "[1" + ws21 + "]", R"({"a")" + ws21 + ":1}", "[1,\f2]", "[1,\v2]",
       "[1,\xC2\xA0"
       "2]"});
  // Compact: no whitespace between tokens, any inside strings.
  schema_test::Options compact;
  compact.max_whitespace = 0;
  expect_schema("{}", {"[1,2]", R"({"a":[true,null]})", R"(" a b ")"},
                {"[1, 2]", R"({"a": 1})", R"({ "a":1})", "[1 ]", " 1", "[\n1]"}, compact);
  const auto obj = JsonGrammar::any_object(llama_index(), compact);
  expect_texts(obj, {R"({"a":1})"}, {R"({"a": 1})"});
}

// --- literals and structure ---------------------------------------------------

TEST(JsonSchemaLexical, Literals) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_schema("{}", {"true", "false", "null"},
                {"tru", "True", "nul", "NULL", "truex", "nulll", "fals", "undefined"});
  EXPECT_TRUE(prefix_ok("{}", "tru"));
  EXPECT_FALSE(prefix_ok("{}", "tx"));
}

TEST(JsonSchemaLexical, NestingAndStructure) {
  SCHEMA_TEST_NEEDS_LLAMA();
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += i % 2 ? R"({"k":)" : "[";
  deep += "0";
  for (int i = 99; i >= 0; --i) deep += i % 2 ? "}" : "]";
  expect_schema("{}", {R"({"a":[{"b":[[[]]]},{"c":{"d":null}}]})", deep, "[[],{}]", R"({"":""})"},
                {"[[]", "[}", R"({"a" 1})", R"({"a":1,})", "[1,]", "{,}", "{1:2}", "[1 2]",
                 R"({"a":1 "b":2})", "{'a':1}", "[]]", "{}{}", "1 2"});
}

TEST(JsonSchemaLexical, JsonObjectAcceptsOnlyObjects) {
  SCHEMA_TEST_NEEDS_LLAMA();
  const auto g = JsonGrammar::any_object(llama_index());
  expect_texts(g, {"{}", R"({"a":[1,{"b":null}]})", R"( { "x" : "\u00e9" } )"},
               {"[]", "1", R"("s")", "null", "true", R"({"a":})", "{"});
  EXPECT_EQ(error_of([] { (void)JsonGrammar::any_object(nullptr); }), "invalid_argument index");
}

// --- the engine contract with real token ids -----------------------------------

struct Engine {
  const nextok::Tokenizer& tok = *schema_test::llama();
  const nextok::Vocabulary& vocab = tok.vocab();
  std::vector<uint32_t> mask = std::vector<uint32_t>(nextok::bitmask_words(vocab.size()));

  std::vector<uint32_t> encode(std::string_view text) const {
    return tok.encode(text, nextok::EncodeOptions{.parse_special = false});
  }
  bool allowed(uint32_t id) const { return nextok::bitmask_allows(mask, id); }
  bool any_eos() const {
    for (uint32_t id : vocab.eos_ids())
      if (allowed(id)) return true;
    return false;
  }
  bool all_eos() const {
    for (uint32_t id : vocab.eos_ids())
      if (!allowed(id)) return false;
    return true;
  }
};

constexpr const char* kPerson = R"({"type":"object","properties":{
    "name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0},
    "tags":{"type":"array","items":{"enum":["a","b c","ü"]}},
    "id":{"type":"string","format":"uuid"}},
    "required":["name","age"],"additionalProperties":false})";

// uniqueItems over strings sharing prefixes and numbers sharing digits.
constexpr const char* kUnique = R"({"type":"array","uniqueItems":true,
    "items":{"enum":["a","b","ab","abc",1,10,100,true,null]}})";

// propertyNames narrowing keys beside a declared one and any other.
constexpr const char* kNames = R"({"properties":{"id":{"type":"integer"},"abc":{}},
    "additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^[a-z]{1,4}$"}})";

// Pattern keys: a counted class, a prefix, a pattern whose ECMA and Unicode
// readings differ on non-ASCII keys (such keys never resolve), a declared
// name, and a never-valued pattern.
constexpr const char* kPatternKeys = R"({"type":"object","properties":{"id":{"type":"integer"}},
    "patternProperties":{"^[a-z0-9_-]{0,40}$":{"type":"string"},"^x-":{},"^\\w+$":{"type":"integer"},
    "^zz":false},"additionalProperties":false})";

// Any name by pattern beside declared ones: a declared name read once may
// not come again, while other names stay open.
constexpr const char* kOpenPatternKeys = R"({"type":"object","properties":{
    "search":{"type":"boolean"},"sea":{"type":"boolean"}},"patternProperties":{".*":{"type":"boolean"}}})";

// Counted pattern keys and values, read near and far from their bounds.
constexpr const char* kCountedKeys = R"({"type":"object","patternProperties":{
    "^[a-z0-9]{1,300}$":{"anyOf":[{"type":"integer"},{"type":"string","pattern":"^[a-z]{2,200}$"}]}},
    "additionalProperties":false})";

// Runs f in a child process first, so that a crash fails the calling test
// instead of ending the whole test binary. True when f returned normally.
template <class F>
bool survives(F f) {
  const auto* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  const int parts = result->total_part_count();
  EXPECT_EXIT(
      {
        f();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "")
      << "the constraint engine crashed";
  return result->total_part_count() == parts;
}

// Each document, tokenized, passes the masks token by token; EOS is allowed
// exactly at the end and alone after it.
void expect_documents_pass(const std::shared_ptr<const JsonGrammar>& g,
                           std::initializer_list<const char*> docs) {
  Engine e;
  const bool ok = survives([&] {
    JsonConstraint c(g);
    for (const char* doc : docs) {
      c.reset();
      for (uint32_t id : e.encode(doc)) {
        c.step_mask(e.mask);
        if (e.allowed(id)) c.advance(id);
      }
      c.step_mask(e.mask);
    }
  });
  if (!ok) return;
  JsonConstraint c(g);
  const auto bos = e.vocab.bos_id();
  for (const char* doc : docs) {
    SCOPED_TRACE(doc);
    c.reset();
    for (uint32_t id : e.encode(doc)) {
      c.step_mask(e.mask);
      ASSERT_TRUE(e.allowed(id)) << "refused token " << id << " '" << e.vocab.bytes(id) << "'";
      ASSERT_FALSE(e.any_eos());
      ASSERT_FALSE(c.is_complete());
      if (bos) {
        ASSERT_FALSE(e.allowed(*bos));
      }
      c.advance(id);
    }
    c.step_mask(e.mask);
    EXPECT_TRUE(c.is_complete());
    EXPECT_TRUE(e.all_eos());
    c.advance(e.vocab.eos_ids()[0]);
    EXPECT_TRUE(c.finished());
    EXPECT_FALSE(c.can_continue());
    c.step_mask(e.mask);
    size_t bits = 0;
    for (uint32_t w : e.mask) bits += static_cast<size_t>(__builtin_popcount(w));
    EXPECT_EQ(bits, e.vocab.eos_ids().size());
  }
}

TEST(JsonSchemaEngine, EveryTokenOfValidInstancesIsAllowedAndEosOnlyAtTheEnd) {
  SCHEMA_TEST_NEEDS_LLAMA();
  expect_documents_pass(compile(kPerson),
                        {R"({"name":"Ada Lovelace","age":36})",
                         R"({"age": 36, "name": "Ada", "tags": ["a", "b c", "ü"]})",
                         "{\n  \"name\": \"Zo\xC3\xAB \xF0\x9F\x98\x80\",\n  \"age\": 0,\n"
                         "  \"id\": \"123e4567-e89b-12d3-a456-426614174000\"\n}"});
}

TEST(JsonSchemaEngine, UnconstrainedValuesPassTokenByToken) {
  SCHEMA_TEST_NEEDS_LLAMA();
  const char* object = R"({"a": [1, "two", -3.5e2], "b": {"c": null, "d": true}})";
  expect_documents_pass(JsonGrammar::any_object(llama_index()), {object, "{}"});
  expect_documents_pass(compile("{}"), {object, R"([1, "x\n\u00e9", false])"});
  expect_documents_pass(compile(R"({"type":"array","items":{"type":"integer"}})"),
                        {"[1, 22, 333, -4444]"});
}

TEST(JsonSchemaEngine, MaskEqualsBruteForceOverTheVocabulary) {
  SCHEMA_TEST_NEEDS_LLAMA();
  Engine e;
  struct Case {
    const char* schema;
    const char* prefix;  // read first, token by token
  };
  // A counted key 8 characters short of its bound: longer tokens must go.
  static const std::string near_bound = "{\"" + std::string(292, 'k');
  const Case cases[] = {
      {kCountedKeys, near_bound.c_str()},
      {kPerson, R"({"na)"},
      {kPerson, R"({"name": "Ad)"},
      {kPerson, R"({"name":"A","age":3,"tags":["b)"},
      {R"({"type":"string","maxLength":3})", R"("a)"},
      {R"({"type":"integer","minimum":10,"maximum":99})", "1"},
      {"{}", R"([1, {"a": tr)"},
      {kUnique, R"(["a", "b", ")"},
      {kUnique, R"(["ab", "a)"},
      {kUnique, R"(["abc", "a)"},
      {kUnique, R"([1, "a", 1)"},
      {kNames, R"({"id": 1, "a)"},
      {kNames, R"({"ab)"},
      {kPatternKeys, R"({")"},
      {kPatternKeys, R"({"ab)"},
      {kPatternKeys, R"({"x-Q)"},
      {kPatternKeys, R"({"x-A": 1, "i)"},
      {kPatternKeys, R"({"z)"},
      {kCountedKeys, R"({"a": 1, "abcdefghijklmnopqrstuvwxyz0123456789": "abcdefghijklmnopq)"},
      // Value starts, where the walk enters strings: free text,
      // and text that excludes an ASCII and a two-byte character.
      {kPerson, R"({"name": )"},
      {R"({"type":"array","items":{"type":"string"}})", "["},
      {R"({"type":"array","items":{"type":"string","pattern":"^[^x\u00e9]*$"}})", R"(["a", )"},
      {R"({"type":"array","items":{"type":"string","pattern":"^[^\u4e2d]*$"}})", "["},
      {kOpenPatternKeys, R"({"search": true, ")"},
      {kOpenPatternKeys, R"({"search": true, "sea": false, "sea)"},
      // Any other key, but propertyNames leaves "b" only its declared value,
      // which cannot exist: a key state that reaches nothing the object takes.
      {R"({"allOf":[{"properties":{"b":{"type":"object"}}}],"propertyNames":{"maxLength":1},
          "additionalProperties":{"type":"integer"}})",
       R"({")"},
      {R"({"properties":{"ab":false},"propertyNames":{"maxLength":2},"additionalProperties":{}})",
       R"({"c": 1, ")"}};
  auto run = [&](const Case& k, JsonConstraint& c) {
    for (uint32_t id : e.encode(k.prefix)) c.advance(id);
    c.step_mask(e.mask);
  };
  if (!survives([&] {
        for (const Case& k : cases) {
          JsonConstraint c(compile(k.schema));
          run(k, c);
        }
      })) {
    return;
  }
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.schema) + " after " + k.prefix);
    JsonConstraint c(compile(k.schema));
    run(k, c);
    size_t wrong = 0;
    for (uint32_t id = 0; id < e.vocab.size(); ++id) {
      const std::string_view bytes = e.vocab.bytes(id);
      const bool expect = e.vocab.is_eos(id)
                              ? c.is_complete()
                              : !e.vocab.is_special(id) && !bytes.empty() && c.accepts_bytes(bytes);
      if (e.allowed(id) != expect && ++wrong <= 5) {
        ADD_FAILURE() << "token " << id << " '" << bytes << "' mask " << e.allowed(id);
      }
    }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(JsonSchemaEngine, EosBitsFollowCompleteness) {
  SCHEMA_TEST_NEEDS_LLAMA();
  Engine e;
  const auto g = compile(R"({"type":"integer"})");
  ASSERT_TRUE(survives([&] {
    JsonConstraint c(g);
    c.advance(e.encode("-")[0]);
    c.step_mask(e.mask);
  }));
  JsonConstraint c(g);
  c.step_mask(e.mask);
  EXPECT_FALSE(e.any_eos());
  EXPECT_FALSE(c.is_complete());
  EXPECT_EQ(error_of([&] { c.advance(e.vocab.eos_ids()[0]); }), "invalid_argument token");
  c.advance(e.encode("-")[0]);
  c.step_mask(e.mask);
  EXPECT_FALSE(e.any_eos());
  EXPECT_TRUE(c.can_continue());
  c.advance(e.encode("12")[0]);
  c.step_mask(e.mask);
  EXPECT_TRUE(e.all_eos());
  EXPECT_TRUE(c.is_complete());
  EXPECT_TRUE(c.can_continue());  // more digits may follow
  // Compact and finished: nothing but EOS may follow.
  schema_test::Options compact;
  compact.max_whitespace = 0;
  JsonConstraint b(compile(R"({"type":"boolean"})", compact));
  for (uint32_t id : e.encode("true")) b.advance(id);
  EXPECT_TRUE(b.is_complete());
  EXPECT_FALSE(b.can_continue());
}

TEST(JsonSchemaEngine, RefusedTokenThrowsAndLeavesStateUnchanged) {
  SCHEMA_TEST_NEEDS_LLAMA();
  Engine e;
  JsonConstraint c(compile(kPerson));
  for (uint32_t id : e.encode(R"({"name")")) c.advance(id);
  const size_t steps = c.steps();
  c.step_mask(e.mask);
  const std::vector<uint32_t> before = e.mask;
  for (const char* text : {"[", "}", "1", "\"x"}) {
    const uint32_t id = e.encode(text)[0];
    EXPECT_FALSE(e.allowed(id)) << text;
    EXPECT_EQ(error_of([&] { c.advance(id); }), "invalid_argument token") << text;
  }
  EXPECT_EQ(error_of([&] { c.advance(e.vocab.eos_ids()[0]); }), "invalid_argument token");
  EXPECT_EQ(error_of([&] { c.advance(static_cast<uint32_t>(e.vocab.size()) + 5); }),
            "invalid_argument token");
  EXPECT_EQ(c.steps(), steps);
  c.step_mask(e.mask);
  EXPECT_EQ(e.mask, before);
  EXPECT_TRUE(c.completes_with(R"(:"A","age":1})"));
}

TEST(JsonSchemaEngine, RollbackCloneAndReset) {
  SCHEMA_TEST_NEEDS_LLAMA();
  Engine e;
  JsonConstraint c(compile(kPerson));
  const auto ids = e.encode(R"({"name": "Ada", "age": 36, "tags": ["b c"]})");
  ASSERT_GT(ids.size(), 6u);
  c.step_mask(e.mask);
  const std::vector<uint32_t> initial = e.mask;
  for (size_t k = 0; k < 3; ++k) c.advance(ids[k]);
  c.step_mask(e.mask);
  const std::vector<uint32_t> at3 = e.mask;
  const auto fork = c.clone();
  for (size_t k = 3; k < ids.size(); ++k) c.advance(ids[k]);
  EXPECT_TRUE(c.is_complete());
  // The clone did not move with the original.
  fork->step_mask(e.mask);
  EXPECT_EQ(e.mask, at3);
  EXPECT_FALSE(fork->is_complete());
  fork->advance(ids[3]);
  EXPECT_TRUE(c.is_complete());
  // Rollback restores the earlier state exactly.
  c.rollback(ids.size() - 3);
  EXPECT_EQ(c.steps(), 3u);
  c.step_mask(e.mask);
  EXPECT_EQ(e.mask, at3);
  EXPECT_EQ(error_of([&] { c.rollback(4); }), "invalid_argument n");
  // Rollback over EOS un-finishes.
  for (size_t k = 3; k < ids.size(); ++k) c.advance(ids[k]);
  c.advance(e.vocab.eos_ids()[0]);
  EXPECT_TRUE(c.finished());
  c.rollback(1);
  EXPECT_FALSE(c.finished());
  EXPECT_TRUE(c.is_complete());
  c.reset();
  EXPECT_EQ(c.steps(), 0u);
  EXPECT_FALSE(c.is_complete());
  c.step_mask(e.mask);
  EXPECT_EQ(e.mask, initial);
}

TEST(JsonSchemaEngine, MaskSize) {
  SCHEMA_TEST_NEEDS_LLAMA();
  Engine e;
  JsonConstraint c(compile(R"({"type":"string"})"));
  std::vector<uint32_t> small(e.mask.size() - 1);
  EXPECT_EQ(error_of([&] { c.step_mask(small); }), "mask_size_mismatch mask");
  EXPECT_EQ(error_of([&] { c.step_mask({}); }), "mask_size_mismatch mask");
  // A wider mask (padded logits) is fine; the words past the vocabulary are cleared.
  std::vector<uint32_t> wide(e.mask.size() + 2, 0xFFFFFFFFu);
  c.step_mask(wide);
  EXPECT_EQ(wide[e.mask.size()], 0u);
  EXPECT_EQ(wide[e.mask.size() + 1], 0u);
  EXPECT_TRUE(nextok::bitmask_allows(wide, e.encode("\"")[0]));
  EXPECT_FALSE(nextok::bitmask_allows(wide, e.encode("1")[0]));
}

// --- hostile schemas ------------------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string nested_items(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += R"({"items":)";
  s += "{}";
  s += std::string(static_cast<size_t>(depth), '}');
  return s;
}

TEST(JsonSchemaHostile, DeeplyNestedSchemasFailCleanly) {
  SCHEMA_TEST_NEEDS_LLAMA();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string err = schema_error(nested_items(10000));
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_EQ(err.rfind("invalid_argument /items", 0), 0u) << err.substr(0, 80);
  // Past max_schema_depth too, and within it the schema works.
  const size_t limit = nextok::ConstraintLimits{}.max_schema_depth;
  EXPECT_EQ(schema_error(nested_items(static_cast<int>(limit) + 88)).rfind("invalid_argument /", 0),
            0u);
  std::string typed, pointer;
  for (size_t i = 0; i < limit + 88; ++i) typed += R"({"type":"array","items":)";
  typed += "{}";
  typed += std::string(limit + 88, '}');
  for (size_t i = 0; i < limit + 1; ++i) pointer += "/items";
  EXPECT_EQ(schema_error(typed), "invalid_argument " + pointer);
  std::string arrays = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(matches(nested_items(100), arrays));
  // A deeply nested instance is refused, not a crash.
  EXPECT_FALSE(prefix_ok("{}", std::string(10000, '[')));
}

TEST(JsonSchemaHostile, HugeEnumIsRefused) {
  SCHEMA_TEST_NEEDS_LLAMA();
  std::string s = R"({"enum":[)";
  for (int i = 0; i < 200000; ++i) {
    if (i) s += ',';
    s += std::to_string(i);
  }
  s += "]}";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(schema_error(s), "invalid_argument /enum");
  EXPECT_LT(seconds_since(t0), 5.0);
}

TEST(JsonSchemaHostile, CatastrophicRegexCompilesWithinLimitsOrFailsCleanly) {
  SCHEMA_TEST_NEEDS_LLAMA();
  for (const char* schema : {R"({"type":"string","pattern":"(a|aa)*(b|bb)*c{1,200}"})",
                             R"({"type":"string","pattern":"^(a|aa)*(b|bb)*c{1,200}$"})"}) {
    SCOPED_TRACE(schema);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = schema_error(schema);
    EXPECT_LT(seconds_since(t0), 5.0);
    if (!err.empty()) {
      EXPECT_TRUE(err == "invalid_argument /pattern" || err == "unsupported /pattern") << err;
      continue;
    }
    const bool anchored = std::string_view(schema).find("\"^") != std::string_view::npos;
    expect_texts(compile(schema), {R"("aabbbccc")", R"("c")"}, {R"("aabb")", R"("")"});
    EXPECT_EQ(matches(schema, R"("xxcxx")"), !anchored);
  }
}

TEST(JsonSchemaHostile, MalformedSchemasAreInvalidArguments) {
  SCHEMA_TEST_NEEDS_LLAMA();
  EXPECT_EQ(schema_error(R"({"type": "string")"), "invalid_argument schema");
  EXPECT_EQ(schema_error(R"({"type":"object",})"), "invalid_argument schema");
  EXPECT_EQ(schema_error(""), "invalid_argument schema");
  EXPECT_EQ(schema_error(R"({"type": 5})"), "invalid_argument /type");
  EXPECT_EQ(schema_error(R"({"type":"strin"})"), "invalid_argument /type");
  EXPECT_EQ(schema_error(R"({"minLength": -1})"), "invalid_argument /minLength");
  EXPECT_EQ(schema_error(R"({"maxLength": 1.5})"), "invalid_argument /maxLength");
  EXPECT_EQ(schema_error(R"({"maxItems":"3"})"), "invalid_argument /maxItems");
  EXPECT_EQ(schema_error(R"({"required":"a"})"), "invalid_argument /required");
  EXPECT_EQ(schema_error(R"({"properties":[]})"), "invalid_argument /properties");
  EXPECT_EQ(schema_error(R"({"anyOf":[]})"), "invalid_argument /anyOf");
  EXPECT_EQ(schema_error(R"({"enum":5})"), "invalid_argument /enum");
  EXPECT_EQ(schema_error(R"({"minimum":"0"})"), "invalid_argument /minimum");
  EXPECT_EQ(schema_error(R"({"pattern":"("})"), "invalid_argument /pattern");
  EXPECT_EQ(schema_error(R"({"items":5})"), "invalid_argument /items");
  EXPECT_EQ(schema_error("5"), "invalid_argument /");
}

TEST(JsonSchemaHostile, OutOfRangeNumbersInSchemasGiveNextokErrors) {
  SCHEMA_TEST_NEEDS_LLAMA();
  // Valid JSON whose numbers overflow a double: compiled, or a typed error.
  for (const char* schema :
       {R"({"maximum":1e400})", R"({"const":1e400})", R"({"enum":[-1e999]})", "1e400"}) {
    const std::string err = schema_error(schema);
    EXPECT_TRUE(err.empty() || err.rfind("invalid_argument ", 0) == 0) << schema << ": " << err;
  }
}

TEST(JsonSchemaHostile, LimitsAreEnforced) {
  SCHEMA_TEST_NEEDS_LLAMA();
  schema_test::Options opt;
  opt.limits.max_schema_bytes = 16;
  EXPECT_EQ(schema_error(R"({"type":"string","minLength":1})", opt), "invalid_argument schema");
  opt = {};
  opt.limits.max_grammar_nodes = 8;
  EXPECT_EQ(schema_error(R"({"properties":{"a":{"type":"string"},"b":{"type":"integer"},
                             "c":{"type":"null"},"d":{"type":"array"}}})",
                         opt)
                .rfind("invalid_argument", 0),
            0u);
  opt = {};
  opt.limits.max_enum_values = 2;
  EXPECT_EQ(schema_error(R"({"enum":[1,2,3]})", opt), "invalid_argument /enum");
  EXPECT_EQ(schema_error(R"({"enum":[1,2]})", opt), "");
  EXPECT_EQ(error_of([] { (void)JsonGrammar::from_schema(nullptr, "{}"); }),
            "invalid_argument index");
}

}  // namespace
