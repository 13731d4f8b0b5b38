// Structural tags: masks checked token by token against a reference that
// splits the text at the tags with string searches and judges the JSON
// parts with JsonConstraint (tested on its own), on a small vocabulary made
// of the fragments that cross phases, and on the real Llama-3.1 vocabulary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "json_schema_test_util.hpp"
#include "nextok/mask.hpp"
#include "nextok/structural_tag.hpp"
#include "nextok/vocab.hpp"

namespace {

using nextok::JsonConstraint;
using nextok::JsonGrammar;
using nextok::StructuralTagConstraint;
using nextok::StructuralTagFormat;
using nextok::StructuralTagGrammar;
using nextok::TokenIndex;

constexpr const char* kCallSchema = R"({"anyOf": [
  {"type": "object", "properties": {"name": {"const": "get_weather"},
   "arguments": {"type": "object", "properties": {"city": {"type": "string"},
     "days": {"type": "integer"}}, "required": ["city"], "additionalProperties": false}},
   "required": ["name", "arguments"], "additionalProperties": false},
  {"type": "object", "properties": {"name": {"const": "ping"},
   "arguments": {"type": "object", "additionalProperties": false}},
   "required": ["name", "arguments"], "additionalProperties": false}]})";

constexpr uint8_t kJsonWhitespace = 2;

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The reference: whether `text` can be continued to (or, with `whole`, is) a
// complete output of the format.
struct Reference {
  const StructuralTagFormat& f;
  std::shared_ptr<const JsonGrammar> json;
  size_t json_ws;  // the content grammar's max_whitespace

  bool prefix_of(std::string_view a, std::string_view b) const {
    return a.size() <= b.size() && b.substr(0, a.size()) == a;
  }
  // From the start of a gap (after `done` segments).
  bool gap(std::string_view t, uint32_t done, bool whole) const {
    size_t ws = 0;
    while (ws < t.size() && is_ws(t[ws])) ++ws;
    if (ws > f.max_gap_whitespace) return false;
    t.remove_prefix(ws);
    if (t.empty()) return whole ? done >= f.min_segments : true;
    if (done >= f.max_segments) return false;
    if (t.size() < f.begin.size()) return !whole && prefix_of(t, f.begin);
    if (!prefix_of(f.begin, t)) return false;
    return value(t.substr(f.begin.size()), done, whole);
  }
  // From the start of a segment's JSON value.
  bool value(std::string_view t, uint32_t done, bool whole) const {
    JsonConstraint probe(json);
    if (!whole && probe.accepts_bytes(t)) return true;
    // The values here are objects: one can end only at a '}', followed by
    // at most `json_ws` bytes of its own trailing whitespace.
    for (size_t close = t.find('}'); close != std::string_view::npos;
         close = t.find('}', close + 1)) {
      if (!probe.completes_with(t.substr(0, close + 1))) continue;
      for (size_t w = 0; w <= json_ws && close + 1 + w <= t.size(); ++w) {
        if (w > 0 && !is_ws(t[close + w])) break;
        if (after_value(t.substr(close + 1 + w), done, whole)) return true;
      }
    }
    return false;
  }
  bool after_value(std::string_view rest, uint32_t done, bool whole) const {
    if (f.end.empty()) return gap(rest, done + 1, whole);
    if (rest.size() < f.end.size()) return !whole && prefix_of(rest, f.end);
    return prefix_of(f.end, rest) && gap(rest.substr(f.end.size()), done + 1, whole);
  }
  bool operator()(std::string_view t, bool whole) const {
    if (!f.text_before) return gap(t, 0, whole);
    const size_t at = t.find(f.begin);
    if (at == std::string_view::npos) return whole ? f.min_segments == 0 : true;
    return value(t.substr(at + f.begin.size()), 0, whole);
  }
};

std::shared_ptr<const nextok::Vocabulary> fragment_vocab() {
  std::vector<std::string> toks = {"<tool_call>",
                                   "<tool",
                                   "_call>",
                                   "</tool_call>",
                                   "</",
                                   "tool",
                                   "_call",
                                   ">",
                                   "<",
                                   "/",
                                   "}}",
                                   "}\n",
                                   "}}\n</",
                                   "\"}",
                                   "{\"",
                                   "\": ",
                                   "\"name\"",
                                   "\"arguments\"",
                                   "get_weather",
                                   "ping",
                                   "\"city\"",
                                   "\"days\"",
                                   ">\n{\"",
                                   "call>{",
                                   "Hello",
                                   " world",
                                   "1}",
                                   "}</",
                                   "} </",
                                   "\n\n",
                                   "  ",
                                   "\n",
                                   " ",
                                   "{",
                                   "}",
                                   "\"",
                                   ":",
                                   ",",
                                   "1",
                                   "2",
                                   "a",
                                   "Paris",
                                   "\"Paris\"",
                                   "\"}}",
                                   "}}\n",
                                   "\n<tool_call>\n{\"",
                                   "e",
                                   "name",
                                   "arguments",
                                   ", ",
                                   "call",
                                   "_",
                                   "\"}}</tool_call>"};
  for (char c = ' '; c <= '~'; ++c)
    if (std::find(toks.begin(), toks.end(), std::string(1, c)) == toks.end())
      toks.emplace_back(1, c);
  toks.emplace_back("<eos>");
  const uint32_t eos = static_cast<uint32_t>(toks.size() - 1);
  return nextok::Vocabulary::from_token_bytes(toks, std::span(&eos, 1));
}

// Walks seeded random paths through the mask; at every step the mask equals
// the reference's verdict on every token, and EOS its verdict on the text.
// The ids whose mask bits are compared: all of a small vocabulary; of a real
// one, every token with a byte that can cross a phase and a seeded sample of
// the others (the reference is slow).
std::vector<uint32_t> probe_ids(const nextok::Vocabulary& vocab) {
  std::vector<uint32_t> ids;
  std::mt19937 rng(99);
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view b = vocab.bytes(id);
    const bool crossing = b.find_first_of("<>{}\"/") != std::string_view::npos;
    if (vocab.size() < 1000 || vocab.is_eos(id) || crossing || rng() % 200 == 0) ids.push_back(id);
  }
  return ids;
}

void check_walks(std::shared_ptr<const TokenIndex> index, const StructuralTagFormat& f, int walks,
                 int steps, std::vector<std::string>* outputs = nullptr) {
  const auto& vocab = index->vocab();
  auto g = StructuralTagGrammar::build(index, f);
  Reference ref{f, f.content, kJsonWhitespace};
  std::mt19937 rng(1234);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab.size()));
  const std::vector<uint32_t> probes = probe_ids(vocab);
  for (int w = 0; w < walks; ++w) {
    StructuralTagConstraint c(g);
    std::string text;
    for (int s = 0; s < steps; ++s) {
      c.step_mask(mask);
      std::vector<uint32_t> allowed;
      for (const uint32_t id : probes) {
        const bool bit = (mask[id >> 5] >> (id & 31)) & 1u;
        const bool want =
            vocab.is_eos(id) ? ref(text, true) : ref(text + std::string(vocab.bytes(id)), false);
        ASSERT_EQ(bit, want) << "walk " << w << " after '" << text << "', token " << id << " '"
                             << vocab.bytes(id) << "'";
      }
      for (uint32_t id = 0; id < vocab.size(); ++id)
        if ((mask[id >> 5] >> (id & 31)) & 1u) allowed.push_back(id);
      ASSERT_FALSE(allowed.empty()) << "dead end after '" << text << "'";
      // Prefer ending late so that walks reach the later phases.
      const size_t at = rng() % allowed.size();
      uint32_t pick = allowed[at];
      if (vocab.is_eos(pick) && s < steps / 2 && allowed.size() > 1)
        pick = allowed[(at + 1) % allowed.size()];
      c.advance(pick);
      if (vocab.is_eos(pick)) break;
      text += vocab.bytes(pick);
    }
    if (outputs) outputs->push_back(text);
  }
}

StructuralTagFormat tool_format(std::shared_ptr<const TokenIndex> index, bool text_before,
                                uint32_t min, uint32_t max) {
  StructuralTagFormat f;
  f.begin = "<tool_call>";
  f.end = "</tool_call>";
  nextok::JsonConstraintOptions o;
  o.max_whitespace = kJsonWhitespace;
  f.content = JsonGrammar::from_schema(index, kCallSchema, o);
  f.text_before = text_before;
  f.min_segments = min;
  f.max_segments = max;
  f.max_gap_whitespace = 3;
  return f;
}

TEST(StructuralTag, MasksEqualTheReferenceOnFragments) {
  auto index = TokenIndex::build(fragment_vocab());
  check_walks(index, tool_format(index, true, 0, 1), 5, 40);   // auto
  check_walks(index, tool_format(index, false, 1, 1), 5, 40);  // required
  check_walks(index, tool_format(index, false, 1, StructuralTagFormat::kUnlimited), 4, 60);
  auto f = tool_format(index, true, 0, 2);
  f.end.clear();  // the value alone ends a segment
  check_walks(index, f, 4, 40);
}

TEST(StructuralTag, ReadsCrossingTokensAndRollsBack) {
  auto index = TokenIndex::build(fragment_vocab());
  auto g = StructuralTagGrammar::build(index, tool_format(index, false, 1, 1));
  const auto& v = index->vocab();
  auto id = [&](std::string_view s) {
    for (uint32_t i = 0; i < v.size(); ++i)
      if (v.bytes(i) == s) return i;
    throw std::runtime_error("no token " + std::string(s));
  };
  StructuralTagConstraint c(g);
  for (auto t : {"\n\n", "<tool_call>", "{\"", "name", "\": ", "\"", "ping", "\"", ", ",
                 "\"arguments\"", ":", " ", "{", "}}\n</", "tool_call>"}) {
    if (std::string_view(t) == "tool_call>") {
      c.advance(id("tool"));
      c.advance(id("_call>"));
      break;
    }
    c.advance(id(t));
  }
  EXPECT_TRUE(c.is_complete());
  EXPECT_EQ(c.segments(), 1u);
  c.rollback(2);
  EXPECT_FALSE(c.is_complete());
  EXPECT_EQ(c.segments(), 0u);
  EXPECT_THROW(c.advance(id("Hello")), nextok::Error);
  auto copy = c.clone();
  copy->advance(id("tool"));
  copy->advance(id("_call>"));
  EXPECT_TRUE(copy->is_complete());
  EXPECT_FALSE(c.is_complete());
  const uint32_t eos = v.eos_ids()[0];
  EXPECT_THROW(c.advance(eos), nextok::Error);
  copy->advance(eos);
  EXPECT_TRUE(copy->finished());
}

TEST(StructuralTag, RejectsBadFormats) {
  auto index = TokenIndex::build(fragment_vocab());
  auto f = tool_format(index, true, 0, 1);
  f.begin.clear();
  EXPECT_THROW(StructuralTagGrammar::build(index, f), nextok::Error);
  f = tool_format(index, true, 0, 1);
  f.end = "\n</tool_call>";
  EXPECT_THROW(StructuralTagGrammar::build(index, f), nextok::Error);
  f = tool_format(index, true, 2, 1);
  EXPECT_THROW(StructuralTagGrammar::build(index, f), nextok::Error);
  f = tool_format(index, true, 0, 1);
  f.content = nullptr;
  EXPECT_THROW(StructuralTagGrammar::build(index, f), nextok::Error);
}

TEST(StructuralTag, LlamaVocabularyMatchesTheReference) {
  SCHEMA_TEST_NEEDS_LLAMA();
  auto index = schema_test::llama_index();
  // Fewer, shorter walks: the brute force checks all 128k tokens per step.
  std::vector<std::string> outs;
  check_walks(index, tool_format(index, false, 1, 1), 2, 20, &outs);
  check_walks(index, tool_format(index, true, 0, 1), 2, 8, &outs);
  // A natural spelling whose tokens cross the tags (`}}\n</`) is read.
  auto g = StructuralTagGrammar::build(index, tool_format(index, true, 0, 1));
  StructuralTagConstraint c(g);
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  const auto ids = schema_test::llama()->encode(text);
  std::vector<uint32_t> mask(nextok::bitmask_words(index->vocab().size()));
  for (const uint32_t t : ids) {
    c.step_mask(mask);
    ASSERT_TRUE((mask[t >> 5] >> (t & 31)) & 1u) << index->vocab().bytes(t);
    c.advance(t);
  }
  EXPECT_TRUE(c.is_complete());
}

TEST(StructuralTag, QwenReadsItsToolCallToken) {
  // Qwen3 writes <tool_call> and </tool_call> as single added tokens.
  const auto dir = schema_test::llama_dir().parent_path() / "qwen3";
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(dir / "tokenizer.json"), "the Qwen3 tokenizer");
  const auto tok = nextok::Tokenizer::from_dir(dir);
  auto index = TokenIndex::build(tok.shared_vocab());
  const auto& v = index->vocab();
  const auto begin = v.find("<tool_call>"), end = v.find("</tool_call>");
  ASSERT_TRUE(begin && end);
  std::vector<uint32_t> mask(nextok::bitmask_words(v.size()));
  for (const bool text_before : {true, false}) {
    auto g = StructuralTagGrammar::build(index, tool_format(index, text_before, 0, 1));
    StructuralTagConstraint c(g);
    const std::string text = std::string(text_before ? "Sure.\n" : "\n") +
                             "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
    const auto ids = tok.encode(text);
    ASSERT_NE(std::find(ids.begin(), ids.end(), *begin), ids.end());
    ASSERT_NE(std::find(ids.begin(), ids.end(), *end), ids.end());
    for (const uint32_t t : ids) {
      c.step_mask(mask);
      ASSERT_TRUE((mask[t >> 5] >> (t & 31)) & 1u) << v.bytes(t);
      c.advance(t);
    }
    c.step_mask(mask);
    EXPECT_TRUE(c.is_complete());
    for (const uint32_t e : v.eos_ids()) EXPECT_TRUE((mask[e >> 5] >> (e & 31)) & 1u);
    EXPECT_FALSE((mask[*begin >> 5] >> (*begin & 31)) & 1u);  // one call at most
  }
}

}  // namespace
