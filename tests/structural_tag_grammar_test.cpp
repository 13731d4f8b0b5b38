// Grammar::structural_tag: verdicts XGrammar 0.2.8 gives on the same tags
// (its GrammarMatcher: accept_string, then is_completed), and clear errors.
// tests/python_pkg/test_structural_tag.py compares random tags with XGrammar
// itself.
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

const std::string kInt = R"({"type": "json_schema", "json_schema": {"type": "integer"}})";
const std::string kTagA =
    R"({"type": "tag", "begin": "<f=a>", "content": )" + kInt + R"(, "end": "</f>"})";

std::string tag_format(const std::string& format) {
  return R"({"type": "structural_tag", "format": )" + format + "}";
}

std::string triggered(const std::string& flags) {
  return tag_format(R"({"type": "triggered_tags", "triggers": ["<f="], "tags": [)" + kTagA + "]" +
                    flags + "}");
}

void expect_verdicts(const std::string& tag,
                     const std::vector<std::pair<std::string, bool>>& cases) {
  const auto g = Grammar::structural_tag(small_index(), tag);
  for (const auto& [text, want] : cases)
    EXPECT_EQ(GrammarConstraint(g).completes_with(text), want) << tag << "\n" << text;
}

TEST(XGrammarStructuralTag, TriggeredTagsAsXGrammarReadsThem) {
  expect_verdicts(triggered(""), {{"", true},
                                  {"abc", true},
                                  {"ab<f=a>1</f>c", true},
                                  {"<f=a>1", false},
                                  {"a<f", true},
                                  {"a<f=a>12</f><f=a>3</f>x", true},
                                  {"a<f=a>1</f>b<f=", false},
                                  {"a<f=b>1</f>", false}});
  expect_verdicts(triggered(R"(, "at_least_one": true)"), {{"", false},
                                                           {"abc", false},
                                                           {"ab<f=a>1</f>c", false},
                                                           {"<f=a>1</f>", true},
                                                           {"<f=a>1</f>x", true},
                                                           {"<f=a>1</f><f=a>2</f>", true}});
  expect_verdicts(triggered(R"(, "stop_after_first": true)"), {{"", true},
                                                               {"abc", true},
                                                               {"ab<f=a>1</f>c", false},
                                                               {"<f=a>1</f>", true},
                                                               {"x<f=a>1</f>", true},
                                                               {"<f=a>1</f><f=a>2</f>", false}});
}

TEST(XGrammarStructuralTag, AnyTextStopsAtItsTagsEnd) {
  expect_verdicts(
      tag_format(
          R"({"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": "</a>"})"),
      {{"<a></a>", true},
       {"<a>xx</a>", true},
       {"<a>x</a>x</a>", false},
       {"<a>x</a", false},
       {"<a>x<a>b</a>", true}});
}

TEST(XGrammarStructuralTag, TheEndReachesTextThroughSequencesAndAlternativesNotRepetitions) {
  // XGrammar 0.2.8's verdicts: a tag's end bans itself from any text in a
  // sequence (any element), an alternative or an optional of its content;
  // inside a repetition the text may hold it.
  const std::string any = R"({"type": "any_text"})",
                    x = R"({"type": "const_string", "value": "x"})";
  const auto in_tag = [](const std::string& content) {
    return tag_format(R"({"type": "tag", "begin": "<a>", "content": )" + content +
                      R"(, "end": "</a>"})");
  };
  const std::vector<std::pair<std::string, bool>> stops = {{"<a>x</a>x</a>", false},
                                                           {"<a>x</a>xx</a>", false},
                                                           {"<a>x</ax</a>", true},
                                                           {"<a>xx</a>", true}};
  for (const std::string& content :
       {R"({"type": "sequence", "elements": [)" + any + "," + x + "]}",
        R"({"type": "sequence", "elements": [)" + x + "," + any + "," + x + "]}",
        R"({"type": "optional", "content": {"type": "sequence", "elements": [)" + any + "," + x +
            "]}}",
        R"({"type": "or", "elements": [{"type": "sequence", "elements": [)" + x + "," + any +
            "]}," + x + "]}"})
    expect_verdicts(in_tag(content), stops);
  for (const std::string& content :
       {R"({"type": "plus", "content": )" + any + "}",
        R"({"type": "star", "content": )" + any + "}",
        R"({"type": "repeat", "min": 1, "max": 2, "content": )" + any + "}"})
    expect_verdicts(in_tag(content), {{"<a>x</a>x</a>", true}, {"<a>xx</a>", true}});
  // Triggered tags' text: only where nothing of the content follows it.
  const std::string trig =
      R"({"type": "triggered_tags", "triggers": ["<g"], "tags": [{"type": "tag", "begin": "<gx>",)"
      R"( "content": {"type": "json_schema", "json_schema": {"type": "integer"}}, "end": "</g>"}]})";
  const auto in_gx = [](const std::string& content) {
    return tag_format(R"({"type": "tag", "begin": "<gx>", "content": )" + content +
                      R"(, "end": ["</f>", "</g>"]})");
  };
  expect_verdicts(in_gx(R"({"type": "sequence", "elements": [)" + trig + "," + trig + "]}"),
                  {{"<gx>b<gy</g>", true}, {"<gx>b</g>x</g>", true}});
  expect_verdicts(in_gx(R"({"type": "or", "elements": [)" + trig + "]}"),
                  {{"<gx>b</g>x</g>", false}, {"<gx>bx</g>", true}});
}

TEST(XGrammarStructuralTag, RegexAsXGrammarReadsIt) {
  // ASCII \w and \d, '.' any character (a newline too), ^ and $ at the
  // ends ignored: XGrammar 0.2.8's verdicts.
  const auto re = [](const std::string& p) {
    return tag_format(R"({"type": "regex", "pattern": ")" + p + R"("})");
  };
  expect_verdicts(re(R"(\\w+)"), {{"abc", true}, {"a_9", true}, {"\xC3\xA9", false}, {"", false}});
  expect_verdicts(re(R"(a.b)"), {{"a\nb", true},
                                 {"a\xC3\xA9"
                                  "b",
                                  true},
                                 {"ab", false}});
  expect_verdicts(re(R"(^ab$)"), {{"ab", true}, {"abab", false}});
  expect_verdicts(re(R"(a/b|\\/)"), {{"a/b", true}, {"/", true}, {"a", false}});
  expect_verdicts(re(R"([\\d-]{2})"), {{"1-", true}, {"12", true}, {"a1", false}});
}

TEST(XGrammarStructuralTag, TagsWithSeparatorAndTheOlderShape) {
  expect_verdicts(
      tag_format(R"({"type": "tags_with_separator", "separator": ",", "tags": [)" + kTagA + "]}"),
      {{"", true},
       {"<f=a>1</f>", true},
       {"<f=a>1</f>,<f=a>2</f>", true},
       {"<f=a>1</f>,", false},
       {"x", false}});
  expect_verdicts(R"({"type": "structural_tag", "triggers": ["<f="], "structures": [
                     {"begin": "<f=a>", "schema": {"type": "integer"}, "end": "</f>"}]})",
                  {{"ab<f=a>1</f>c", true}, {"<f=a>x</f>", false}, {"abc", true}});
}

TEST(XGrammarStructuralTag, ReadsXGrammarsOwnDumpWithItsNulls) {
  // StructuralTag(...).model_dump_json() of XGrammar 0.2.8's pydantic
  // classes (what vLLM's tool parsers send): options left unset are null.
  // The verdicts are XGrammar's on this JSON.
  expect_verdicts(
      R"({"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<f="],"tags":[)"
      R"({"type":"tag","begin":"<f=a>","content":{"type":"any_text","excludes":[],)"
      R"("max_tokens":null,"max_chars":null},"end":"</f>"},{"type":"tag","begin":"<f=b>",)"
      R"("content":{"type":"json_schema","json_schema":{"type":"integer"},"style":"json",)"
      R"("any_order":false,"max_whitespace_cnt":null,"excludes":[]},"end":"</f>"}],)"
      R"("at_least_one":false,"stop_after_first":false,"excludes":[]}})",
      {{"x<f=a>any</f>y<f=b>12</f>", true},
       {"<f=b>x</f>", false},
       {"<f=a>a</f>b</f>", true},
       {"<f=a>a</f", false},
       {"<f=a>x<f=a>y</f>", true}});
}

TEST(XGrammarStructuralTag, UnsupportedAndMalformedFormatsAreClearErrors) {
  const std::pair<std::string, ErrorCode> cases[] = {
      {tag_format(R"({"type": "regex", "pattern": "a("})"), ErrorCode::kInvalidArgument},
      {tag_format(R"({"type": "regex", "pattern": "(a)\\1"})"), ErrorCode::kUnsupported},
      {tag_format(R"({"type": "any_tokens"})"), ErrorCode::kUnsupported},
      {tag_format(R"({"type": "grammar", "grammar": "root ::= \"a"})"),
       ErrorCode::kInvalidArgument},
      {tag_format(R"({"type": "token", "token": 5})"), ErrorCode::kUnsupported},
      {tag_format(R"({"type": "what"})"), ErrorCode::kInvalidArgument},
      {tag_format(R"({"type": "tag", "begin": "<a>", "content": {"type": "any_text"}})"),
       ErrorCode::kInvalidArgument},
      {R"({"type": "structural_tag"})", ErrorCode::kInvalidArgument},
      {"{not json", ErrorCode::kInvalidArgument},
      {triggered("").replace(triggered("").find("<f=\"]"), 3, "<z"), ErrorCode::kInvalidArgument},
  };
  for (const auto& [tag, code] : cases) expect_structural_tag_error(tag, code);
}

}  // namespace
