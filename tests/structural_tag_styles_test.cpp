// Grammar::structural_tag's JSON content in XGrammar's other shapes (the
// XML parameter styles, any_order, max_whitespace_cnt) and the dispatch
// format: verdicts XGrammar 0.2.8 gives on the same tags (accept_string,
// then is_completed). tests/python_pkg/test_structural_tag.py draws random
// ones against XGrammar itself.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "grammar_test_util.hpp"
#include "nextok/error.hpp"
#include "nextok/grammar.hpp"

namespace {

using nextok::ErrorCode;
using nextok::Grammar;
using nextok::GrammarConstraint;
using nextok::grammar_test::expect_structural_tag_error;
using nextok::grammar_test::small_index;

void expect_verdicts(const std::string& format,
                     const std::vector<std::pair<std::string, bool>>& cases) {
  const std::string tag = R"({"type": "structural_tag", "format": )" + format + "}";
  const auto g = Grammar::structural_tag(small_index(), tag);
  for (const auto& [text, want] : cases)
    EXPECT_EQ(GrammarConstraint(g).completes_with(text), want) << format << "\n" << text;
}

const std::string kCity =
    R"({"type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["city"]})";

std::string styled(const std::string& schema, const std::string& style) {
  return R"({"type": "json_schema", "json_schema": )" + schema + R"(, "style": ")" + style + "\"}";
}

TEST(XGrammarStructuralTagStyles, QwenXmlParameters) {
  expect_verdicts(
      styled(kCity, "qwen_xml"),
      {{"<parameter=city>Paris</parameter>", true},
       {"<parameter=city>\nNew York\n</parameter>\n<parameter=n>\n3\n</parameter>\n", true},
       {"<parameter=city>a</parameter>b</parameter>", false},
       {"<parameter=n>3</parameter>", false},
       {"<parameter=city>x</parameter><parameter=n>x</parameter>", false},
       {"<parameter=city>\"q\"</parameter>", true},
       {"", false},
       {"<parameter=city></parameter>", true},
       {"<parameter=city>x</parameter><parameter=n> -1 </parameter>", true},
       {"<parameter=n>3</parameter><parameter=city>x</parameter>", false},
       {" <parameter=city>x</parameter> ", true}});
}

TEST(XGrammarStructuralTagStyles, MinimaxAndGlmParameters) {
  expect_verdicts(
      styled(kCity, "minimax_xml"),
      {{"<parameter name=\"city\">Paris</parameter>", true},
       {"<parameter=city>Paris</parameter>", false},
       {"<parameter name=\"city\">a</parameter><parameter name=\"n\">1</parameter>", true}});
  expect_verdicts(styled(kCity, "glm_xml"),
                  {{"<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>", true},
                   {"<arg_key>city</arg_key><arg_value>a</arg_value>b</arg_value>", false},
                   {"<arg_key>city</arg_key><arg_value>a</arg_value><arg_key>n</"
                    "arg_key><arg_value> 2</arg_value>",
                    true}});
}

TEST(XGrammarStructuralTagStyles, ValuesAreRawAtTheTopAndJsonInsideObjects) {
  expect_verdicts(
      R"({"type": "qwen_xml_parameter", "json_schema": {"type": "object", "properties": {
          "o": {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]},
          "e": {"enum": ["a b", 1]}, "s": {"type": "string", "maxLength": 2}},
          "required": ["o", "e", "s"]}})",
      {{"<parameter=o>{\"k\": 1}</parameter><parameter=e>a "
        "b</parameter><parameter=s>xy</parameter>",
        true},
       {"<parameter=o>{\"k\": 1}</parameter><parameter=e>1</parameter><parameter=s></parameter>",
        true},
       {"<parameter=o>{\"k\": 1}</parameter><parameter=e>\"a b\"</parameter><parameter=s>x</"
        "parameter>",
        false},
       {"<parameter=o>{\"k\": 1}</parameter><parameter=e>a b</parameter><parameter=s>xyz</"
        "parameter>",
        false},
       {"<parameter=o><parameter=k>1</parameter></parameter><parameter=e>1</"
        "parameter><parameter=s>x</parameter>",
        false}});
  expect_verdicts(styled(R"({"enum": ["a b", 1, null]})", "qwen_xml"),
                  {{"a b", true}, {"1", true}, {"null", true}, {"\"a b\"", false}, {" 1", false}});
}

TEST(XGrammarStructuralTagStyles, DeepSeekMarksStringsApart) {
  // U+FF5C around DSML; string="true" takes a raw string, string="false"
  // any other value as JSON.
  expect_verdicts(
      styled(R"({"type": "object", "properties": {"s": {"type": "string"},
                    "n": {"type": "integer"}, "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
                    "e": {"enum": ["a", 1]}}, "required": ["s", "n"]})",
             "deepseek_xml"),
      {{"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter>",
        true},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter>\n<｜DSML｜parameter "
        "name=\"n\" string=\"false\"> 3 </｜DSML｜parameter><｜DSML｜parameter name=\"e\" "
        "string=\"true\">a</｜DSML｜parameter>",
        true},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter><｜DSML｜parameter name=\"e\" "
        "string=\"false\">1</｜DSML｜parameter>",
        true},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter><｜DSML｜parameter name=\"e\" "
        "string=\"true\">1</｜DSML｜parameter>",
        false},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter><｜DSML｜parameter name=\"e\" "
        "string=\"false\">a</｜DSML｜parameter>",
        false},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"true\">3</｜DSML｜parameter>",
        false},
       {"<｜DSML｜parameter name=\"s\" "
        "string=\"false\">\"hi\"</｜DSML｜parameter><｜DSML｜parameter name=\"n\" "
        "string=\"false\">3</｜DSML｜parameter>",
        false},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter><｜DSML｜parameter name=\"o\" "
        "string=\"false\">{\"k\": 2}</｜DSML｜parameter>",
        true},
       {"<｜DSML｜parameter name=\"s\" string=\"true\">hi</｜DSML｜parameter><｜DSML｜parameter "
        "name=\"n\" string=\"false\">3</｜DSML｜parameter><｜DSML｜parameter name=\"e\" "
        "string=\"true\"> a </｜DSML｜parameter>",
        false}});
  expect_verdicts(
      styled(R"({"type": "object", "properties": {"a": {}}, "required": ["a"]})",
             "deepseek_v4_1_xml"),
      {{"<｜DSML｜ parameter name=\"a\" string=\"true\">x y</｜DSML｜ parameter>", true},
       {"<｜DSML｜ parameter name=\"a\" string=\"false\">[1]</｜DSML｜ parameter>", true},
       {"<｜DSML｜ parameter name=\"a\" string=\"false\">x</｜DSML｜ parameter>", false},
       {"<｜DSML｜ parameter name=\"a\" string=\"false\">null</｜DSML｜ parameter>", true},
       {"<｜DSML｜ parameter name=\"a\" string=\"true\">null</｜DSML｜ parameter>", true}});
}

std::string json_content(const std::string& schema) {
  return R"({"type": "json_schema", "json_schema": )" + schema + "}";
}

TEST(XGrammarStructuralTagStyles, SchemasAreClosedAsXGrammarsStrictModeCloses) {
  // An object that declares properties takes no other keys unless the
  // schema says so; an array with prefixItems no more items.
  expect_verdicts(json_content(R"({"type": "object", "properties": {"a": {"type": "integer"}}})"),
                  {{"{\"a\": 1}", true}, {"{\"a\": 1, \"b\": 2}", false}, {"{}", true}});
  expect_verdicts(json_content(R"({"type": "object", "properties": {}})"),
                  {{"{}", true}, {"{\"z\": 1}", false}});
  expect_verdicts(json_content(R"({"type": "object"})"), {{"{}", true}, {"{\"z\": 1}", true}});
  expect_verdicts(
      json_content(
          R"({"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": true})"),
      {{"{\"a\": 1, \"b\": 2}", true}});
  expect_verdicts(json_content(R"({"type": "array", "prefixItems": [{"type": "string"}]})"),
                  {{"[\"a\"]", true}, {"[\"a\", 1]", false}});
  expect_verdicts(
      json_content(
          R"({"type": "object", "properties": {"o": {"type": "object", "properties": {"k": {"type": "integer"}}}}})"),
      {{"{\"o\": {\"k\": 1}}", true}, {"{\"o\": {\"k\": 1, \"j\": 2}}", false}});
  expect_verdicts(
      json_content(
          R"({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}})"),
      {{"{\"a\": 1, \"b\": \"x\"}", true}, {"{\"a\": 1, \"b\": 2}", false}});
}

// A hundred tools, each with its own parameter names (XGrammar's
// get_model_structural_tag shape for Qwen3-Coder): within the default
// limits (it passed max_grammar_nodes before the %json rules shared their
// leaves and literals).
TEST(XGrammarStructuralTagStyles, AHundredToolsCompileWithinTheDefaultLimits) {
  for (const char* style : {"json", "qwen_xml", "deepseek_xml"}) {
    std::string tags;
    for (int i = 0; i < 100; ++i) {
      const std::string n = std::to_string(i);
      tags += std::string(i ? ", " : "") + R"({"type": "tag", "begin": "<tool_call>\n<function=f)" +
              n +
              R"(>\n", "end": "\n</function>\n</tool_call>", "content": {"type": "json_schema",
              "style": ")" +
              style + R"(", "json_schema": {"type": "object", "properties": {
              "city": {"type": "string"}, "unit": {"enum": ["c", "f"]},
              "days": {"type": "integer", "minimum": 1, "maximum": 14}, "q)" +
              n + R"(": {"type": "boolean"}}, "required": ["city", "unit"]}}})";
    }
    const std::string call = std::string(style) == "json"
                                 ? R"({"city": "x", "unit": "c", "q7": true})"
                             : std::string(style) == "qwen_xml"
                                 ? "<parameter=city>x</parameter><parameter=unit>c</parameter>"
                                 : "<\uFF5CDSML\uFF5Cparameter name=\"city\" string=\"true\">x</"
                                   "\uFF5CDSML\uFF5Cparameter><\uFF5CDSML\uFF5Cparameter "
                                   "name=\"unit\" string=\"true\">c</\uFF5CDSML\uFF5Cparameter>";
    expect_verdicts(
        R"({"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [)" + tags + "]}",
        {{"hi <tool_call>\n<function=f7>\n" + call + "\n</function>\n</tool_call>", true},
         {"hi <tool_call>\n<function=f7>\n" + call + "\n</function>\n</tool_call>x", true},
         {"<tool_call>\n<function=f100>\n", false}});
  }
}

const std::string kAB =
    R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"], "additionalProperties": false})";

TEST(XGrammarStructuralTagStyles, AnyOrderAndAWhitespaceBound) {
  expect_verdicts(R"({"type": "json_schema", "any_order": true, "json_schema": )" + kAB + "}",
                  {{"{\"b\": \"x\", \"a\": 1}", true},
                   {"{\"a\": 1}", false},
                   {"{\"a\": 1, \"a\": 2}", true},
                   {"{\"a\": 1, \"b\": \"x\", \"a\": 3}", true},
                   {"{}", false},
                   {"{\"c\": 1, \"a\": 1}", false}});
  expect_verdicts(R"({"type": "json_schema", "max_whitespace_cnt": 2, "json_schema": )" + kAB + "}",
                  {{"{\"a\":  1, \"b\": \"\"}", true},
                   {"{\"a\":   1, \"b\": \"\"}", false},
                   {"{ \"a\":1,\"b\":\"\"  }", true}});
}

const std::string kDispatch =
    R"({"type": "dispatch", "rules": [["<f>", {"type": "const_string", "value": "X"}],
                                      ["<g>", {"type": "const_string", "value": "Y"}]])";

TEST(XGrammarStructuralTagStyles, DispatchAsXGrammarReadsIt) {
  expect_verdicts(kDispatch + "}", {{"", true},
                                    {"ab", true},
                                    {"<f>X", true},
                                    {"a<f>Xb<g>Yc", true},
                                    {"a<f>", false},
                                    {"a<f>Y", false},
                                    {"ab<f", true},
                                    {"<f>X<f>X", true}});
  expect_verdicts(kDispatch + R"(, "loop": false})",
                  {{"ab", true}, {"<f>X", true}, {"a<f>Xb", false}, {"a<f>X<g>Y", false}});
  // Its text stops at a tag's end only when excludes names it.
  expect_verdicts(R"({"type": "tag", "begin": "<r>", "end": "</r>", "content": )" + kDispatch +
                      R"(, "excludes": ["</r>"]}})",
                  {{"<r>a</r>", true},
                   {"<r>a</r>b</r>", false},
                   {"<r><f>X</r>", true},
                   {"<r><f>Xb</r>", true}});
  expect_verdicts(
      R"({"type": "tag", "begin": "<r>", "end": "</r>", "content": )" + kDispatch + "}}",
      {{"<r>a</r>b</r>", true}});
}

TEST(XGrammarStructuralTagStyles, GrammarContentIsGbnf) {
  const std::string g =
      R"({"type": "grammar", "grammar": "root ::= (\"yes\" | \"no\" | num) (\",\" [ ]? root)?\nnum ::= [0-9]{1,3}"})";
  expect_verdicts(g, {{"yes", true},
                      {"no,yes", true},
                      {"12, 345,no", true},
                      {"1234", false},
                      {"", false},
                      {"yes,", false},
                      {"x", false}});
  expect_verdicts(R"({"type": "tag", "begin": "<a>", "end": "</a>", "content": )" + g + "}",
                  {{"<a>yes</a>", true}, {"<a>1,2</a>", true}, {"<a></a>", false}});
}

TEST(XGrammarStructuralTagStyles, UnsupportedOptionsAreClearErrors) {
  const std::pair<std::string, ErrorCode> cases[] = {
      {styled(kCity, "cohere_xml"), ErrorCode::kUnsupported},
      {styled(kCity, "yaml"), ErrorCode::kUnsupported},
      {R"({"type": "json_schema", "json_schema": {}, "max_whitespace_cnt": 0})",
       ErrorCode::kInvalidArgument},
      {R"({"type": "dispatch", "rules": []})", ErrorCode::kInvalidArgument},
      {R"({"type": "dispatch", "rules": [["", {"type": "any_text"}]]})",
       ErrorCode::kInvalidArgument},
      {R"({"type": "dispatch", "rules": [["<f>"]]})", ErrorCode::kInvalidArgument},
  };
  for (const auto& [format, code] : cases)
    expect_structural_tag_error(R"({"type": "structural_tag", "format": )" + format + "}", code);
}

}  // namespace
