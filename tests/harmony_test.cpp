// The harmony call constraint: every mask bit, along seeded random walks,
// equals the verdict of a reference that matches the token sequence (control
// tokens as symbols, text as bytes) against the header spellings with plain
// prefix comparisons and judges a call's arguments with JsonConstraint (tested
// on its own). On a fragment vocabulary (all of it) and on gpt-oss's
// o200k_harmony (control tokens, header and JSON fragments, and a sample).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "nextok/chat.hpp"
#include "nextok/error.hpp"
#include "nextok/harmony.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"

namespace {

using nextok::HarmonyCallConstraint;
using nextok::HarmonyCallFormat;
using nextok::HarmonyCallGrammar;
using nextok::JsonConstraint;
using nextok::JsonGrammar;
using nextok::TokenIndex;
using nextok::Vocabulary;

constexpr const char* kWeather =
    R"({"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1}}, "required": ["city"],
        "additionalProperties": false})";
constexpr const char* kPing = R"({"type": "object", "additionalProperties": false})";

constexpr int kControl = 256;  // symbol of control token id t: kControl + t

struct Tool {
  std::string name;
  std::shared_ptr<const JsonGrammar> grammar;
};

// The reference: whether a symbol sequence is a prefix of a turn.
struct Reference {
  const Vocabulary& v;
  nextok::HarmonyTokens t;
  std::vector<Tool> tools;
  bool allow_final;

  enum Kind { kAnalysis, kPreamble, kFinal, kCall };
  struct Header {
    std::vector<int> symbols;
    Kind kind;
    size_t tool;
  };
  std::vector<Header> first, later;

  Reference(const Vocabulary& vocab, std::vector<Tool> tl, bool final_ok)
      : v(vocab),
        t(nextok::HarmonyTokens::find(vocab)),
        tools(std::move(tl)),
        allow_final(final_ok) {
    const std::string C = "\x01", M = "\x02",
                      K = "\x03";  // <|channel|>, <|message|>, <|constrain|>
    std::vector<std::pair<std::string, std::pair<Kind, size_t>>> spellings = {
        {C + "analysis" + M, {kAnalysis, 0}}, {C + "commentary" + M, {kPreamble, 0}}};
    if (allow_final) spellings.push_back({C + "final" + M, {kFinal, 0}});
    for (size_t i = 0; i < tools.size(); ++i) {
      const std::string to = "to=functions." + tools[i].name;
      for (const std::string& s :
           {C + "commentary " + to + " " + K + "json" + M, C + "commentary " + to + " json" + M,
            " " + to + C + "commentary json" + M, " " + to + C + "commentary " + K + "json" + M})
        spellings.push_back({s, {kCall, i}});
    }
    for (const auto& [s, what] : spellings) {
      first.push_back({encode(s), what.first, what.second});
      later.push_back({encode("assistant" + s), what.first, what.second});
    }
  }
  std::vector<int> encode(const std::string& s) const {
    std::vector<int> out;
    for (const char c : s) {
      if (c == '\x01')
        out.push_back(kControl + static_cast<int>(t.channel));
      else if (c == '\x02')
        out.push_back(kControl + static_cast<int>(t.message));
      else if (c == '\x03')
        out.push_back(kControl + static_cast<int>(t.constrain));
      else
        out.push_back(static_cast<unsigned char>(c));
    }
    return out;
  }
  bool is_control(int sym) const { return sym >= kControl; }
  bool is(int sym, uint32_t id) const { return sym == kControl + static_cast<int>(id); }
  bool eos(int sym) const {
    return is_control(sym) && v.is_eos(static_cast<uint32_t>(sym - kControl));
  }

  // Symbols of a token sequence; false for a text token without bytes.
  bool symbols(const std::vector<uint32_t>& ids, std::vector<int>& out) const {
    for (const uint32_t id : ids) {
      if (v.is_special(id) || v.is_eos(id)) {
        out.push_back(kControl + static_cast<int>(id));
      } else {
        if (v.bytes(id).empty()) return false;
        for (const char c : v.bytes(id)) out.push_back(static_cast<unsigned char>(c));
      }
    }
    return true;
  }

  bool operator()(const std::vector<uint32_t>& ids) const {
    std::vector<int> s;
    return symbols(ids, s) && turn(s, 0, true);
  }

  bool turn(const std::vector<int>& s, size_t pos, bool is_first) const {
    if (pos == s.size()) return true;
    for (const Header& h : is_first ? first : later) {
      const size_t n = std::min(h.symbols.size(), s.size() - pos);
      if (!std::equal(h.symbols.begin(), h.symbols.begin() + static_cast<std::ptrdiff_t>(n),
                      s.begin() + static_cast<std::ptrdiff_t>(pos)))
        continue;
      if (n < h.symbols.size()) return true;  // inside this header
      if (body(s, pos + n, h)) return true;
    }
    return false;
  }

  bool body(const std::vector<int>& s, size_t p, const Header& h) const {
    size_t q = p;
    while (q < s.size() && !is_control(s[q])) ++q;
    if (h.kind == kCall) {
      const std::string json(s.begin() + static_cast<std::ptrdiff_t>(p),
                             s.begin() + static_cast<std::ptrdiff_t>(q));
      JsonConstraint c(tools[h.tool].grammar);
      if (q == s.size()) return c.accepts_bytes(json);
      if (!is(s[q], t.call) || !c.completes_with(json)) return false;
      return tail(s, q + 1, eos(s[q]));
    }
    if (q == s.size()) return true;
    if (h.kind == kFinal) {
      const bool ends = is(s[q], t.return_) || (eos(s[q]) && !is(s[q], t.call));
      return ends && tail(s, q + 1, eos(s[q]));
    }
    if (!is(s[q], t.end)) return false;
    if (q + 1 == s.size()) return true;
    return is(s[q + 1], t.start) && turn(s, q + 2, false);
  }

  // After the turn's terminator: one EOS unless it was one.
  bool tail(const std::vector<int>& s, size_t q, bool finished) const {
    if (finished || q == s.size()) return q == s.size();
    return q + 1 == s.size() && eos(s[q]);
  }
};

std::shared_ptr<const Vocabulary> fragment_vocab(bool call_is_eos) {
  std::vector<std::string> toks = {
      "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>",
      "<|return|>", "<|endoftext|>",
      // text
      "analysis", "analy", "sis", "commentary", "comment", "ary", "final", "assistant", " ", " to",
      "=", "to=functions.", "functions", ".", "get_weather", "get", "_weather", "ping", " json",
      "json", "commentary to=functions.ping ", " to=functions.get_weather", "{", "}", "{\"", "\"",
      "city", "\":", ":", ",", "days", "0", "1", "12", "Paris", "Hello", " world", "\n",
      "<|end|>" /* spelled as text */, "{}", "\"}", "\":\"", "x"};
  std::vector<uint32_t> special = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<uint32_t> eos = {6, 7};  // <|return|>, <|endoftext|>
  if (call_is_eos) eos.push_back(5);
  return Vocabulary::from_token_bytes(toks, eos, special);
}

std::vector<Tool> make_tools(const std::shared_ptr<const TokenIndex>& index, bool both) {
  nextok::JsonConstraintOptions o;
  o.max_whitespace = 1;
  std::vector<Tool> tools = {{"get_weather", JsonGrammar::from_schema(index, kWeather, o)}};
  if (both) tools.push_back({"ping", JsonGrammar::from_schema(index, kPing, o)});
  return tools;
}

HarmonyCallFormat format_of(const std::vector<Tool>& tools, bool allow_final) {
  HarmonyCallFormat f;
  for (const Tool& t : tools) f.tools.push_back({t.name, t.grammar});
  f.allow_final = allow_final;
  return f;
}

bool bit(const std::vector<uint32_t>& mask, uint32_t id) {
  return (mask[id >> 5] >> (id & 31)) & 1u;
}

// Tokens whose bits are compared: all of a small vocabulary; of a real one
// the control tokens, tokens that fit a header or hold JSON punctuation, and
// a seeded sample of the rest.
std::vector<uint32_t> probe_ids(const Vocabulary& v) {
  std::vector<uint32_t> ids;
  std::mt19937 rng(7);
  for (uint32_t id = 0; id < v.size(); ++id) {
    const std::string_view b = v.bytes(id);
    const bool header = !b.empty() && std::string_view(
                                          "analysis commentary final assistant "
                                          "to=functions.get_weather ping json")
                                              .find(b) != std::string_view::npos;
    const bool punct = b.size() <= 3 && b.find_first_of("{}\":,") != std::string_view::npos;
    if (v.size() < 1000 || v.is_special(id) || v.is_eos(id) || header || punct || rng() % 4000 == 0)
      ids.push_back(id);
  }
  return ids;
}

// Seeded walks; the mask must equal the reference on every probe at every
// step, and come back after a rollback. Control tokens are preferred now
// and then so that walks reach calls.
// Returns the number of walks that ended their turn.
int check_walks(const std::shared_ptr<const TokenIndex>& index, const std::vector<Tool>& tools,
                bool allow_final, int walks, int steps) {
  const Vocabulary& v = index->vocab();
  const auto g = HarmonyCallGrammar::build(index, format_of(tools, allow_final));
  const Reference ref(v, tools, allow_final);
  const std::vector<uint32_t> probes = probe_ids(v);
  std::vector<uint32_t> mask(nextok::bitmask_words(v.size()));
  std::mt19937 rng(4321);
  int ended = 0;
  for (int w = 0; w < walks; ++w) {
    HarmonyCallConstraint c(g);
    std::vector<uint32_t> ids;
    for (int s = 0; s < steps && !c.finished(); ++s) {
      c.step_mask(mask);
      for (const uint32_t id : probes) {
        ids.push_back(id);
        const bool want = ref(ids);
        ids.pop_back();
        EXPECT_EQ(bit(mask, id), want)
            << "walk " << w << " step " << s << " token " << id << " '" << v.bytes(id) << "'";
        if (bit(mask, id) != want) return ended;
      }
      std::vector<uint32_t> allowed, control;
      for (uint32_t id = 0; id < v.size(); ++id) {
        if (!bit(mask, id)) continue;
        allowed.push_back(id);
        if (v.is_special(id) || v.is_eos(id)) control.push_back(id);
      }
      EXPECT_FALSE(allowed.empty()) << "dead end at step " << s;
      if (allowed.empty()) return ended;
      const bool prefer = !control.empty() && rng() % 5 == 0;
      const auto& from = prefer ? control : allowed;
      const uint32_t pick = from[rng() % from.size()];
      EXPECT_EQ(c.is_complete(), std::any_of(v.eos_ids().begin(), v.eos_ids().end(),
                                             [&](uint32_t e) { return bit(mask, e); }));
      c.advance(pick);
      ids.push_back(pick);
      // Now and then undo the step (and a clone keeps the step): the mask
      // comes back, whatever phase the token crossed into.
      if (rng() % 3 == 0) {
        const std::vector<uint32_t> before = mask;
        auto kept = c.clone();
        c.rollback(1);
        c.step_mask(mask);
        EXPECT_EQ(mask, before) << "rollback after token " << pick << " at step " << s;
        c.advance(pick);
        std::vector<uint32_t> a(mask.size()), b(mask.size());
        c.step_mask(a);
        kept->step_mask(b);
        EXPECT_EQ(a, b) << "clone after token " << pick << " at step " << s;
      }
    }
    ended += c.turn_ended();
  }
  return ended;
}

TEST(Harmony, MasksEqualTheReferenceOnFragments) {
  for (const bool call_is_eos : {false, true}) {
    const auto index = TokenIndex::build(fragment_vocab(call_is_eos));
    const auto tools = make_tools(index, true);
    int ended = check_walks(index, tools, true, 12, 40);                  // auto
    ended += check_walks(index, tools, false, 12, 40);                    // required
    ended += check_walks(index, make_tools(index, false), false, 8, 40);  // named
    ended += check_walks(index, {}, true, 6, 40);                         // none
    EXPECT_GT(ended, 10) << "walks should reach the end of a turn";
    std::printf("harmony fragments (call %s EOS): %d of 38 walks ended their turn\n",
                call_is_eos ? "is" : "is not", ended);
  }
}

TEST(Harmony, ReadsACallRollsBackAndClones) {
  const auto index = TokenIndex::build(fragment_vocab(false));
  const Vocabulary& v = index->vocab();
  const auto tools = make_tools(index, true);
  const auto g = HarmonyCallGrammar::build(index, format_of(tools, false));
  auto id = [&](std::string_view s) {
    for (uint32_t i = 0; i < v.size(); ++i)
      if (v.bytes(i) == s && (s.size() < 3 || !s.starts_with("<|") || v.is_special(i))) return i;
    throw std::runtime_error("no token " + std::string(s));
  };
  HarmonyCallConstraint c(g);
  const std::vector<std::string_view> call = {
      "<|channel|>", "analysis",   "<|message|>", "Hello",
      "<|end|>",     "<|start|>",  "assistant",   " to=functions.get_weather",
      "<|channel|>", "commentary", " json",       "<|message|>",
      "{\"",         "city",       "\":\"",       "Paris",
      "\"}",         "<|call|>"};
  for (const auto s : call) c.advance(id(s));
  EXPECT_TRUE(c.turn_ended());
  EXPECT_TRUE(c.is_complete());
  c.rollback(3);  // back inside the arguments
  EXPECT_FALSE(c.turn_ended());
  EXPECT_THROW(c.advance(id("<|call|>")), nextok::Error);
  auto copy = c.clone();
  copy->advance(id("Paris"));
  copy->advance(id("\"}"));
  copy->advance(id("<|call|>"));
  EXPECT_TRUE(copy->is_complete());
  EXPECT_FALSE(c.is_complete());
  c.rollback(c.steps());
  EXPECT_EQ(c.steps(), 0u);
  EXPECT_THROW(c.advance(id("<|start|>")), nextok::Error);
  // The parse of the same tokens.
  std::vector<uint32_t> ids;
  for (const auto s : call) ids.push_back(id(s));
  const auto turn = nextok::parse_harmony_turn(v, ids);
  ASSERT_EQ(turn.messages.size(), 2u);
  EXPECT_EQ(turn.reasoning.value_or(""), "Hello");
  ASSERT_EQ(turn.calls.size(), 1u);
  EXPECT_EQ(turn.calls[0].name, "get_weather");
  EXPECT_EQ(turn.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(turn.messages[1].content_type, "json");
  EXPECT_FALSE(turn.content.has_value());
}

TEST(Harmony, ParsesCutAndOddTurns) {
  const auto vocab = fragment_vocab(false);
  auto ids = [&](std::initializer_list<std::string_view> parts) {
    std::vector<uint32_t> out;
    for (const auto s : parts)
      for (uint32_t i = 0; i < vocab->size(); ++i)
        if (vocab->bytes(i) == s && (!s.starts_with("<|") || vocab->is_special(i))) {
          out.push_back(i);
          break;
        }
    return out;
  };
  // A call cut by the token limit is no call; its text stays a message.
  auto t =
      nextok::parse_harmony_turn(*vocab, ids({"<|channel|>", "commentary", " to", "=", "functions",
                                              ".", "ping", " json", "<|message|>", "{"}));
  ASSERT_EQ(t.messages.size(), 1u);
  EXPECT_FALSE(t.messages[0].complete);
  EXPECT_EQ(t.messages[0].recipient, "functions.ping");
  EXPECT_TRUE(t.calls.empty());
  // A preamble and a final answer are content, analysis is reasoning; text
  // that spells a control token is text.
  t = nextok::parse_harmony_turn(
      *vocab, ids({"<|channel|>", "analysis",    "<|message|>", "Hello",      "<|end|>",
                   "<|start|>",   "assistant",   "<|channel|>", "commentary", "<|message|>",
                   " world",      "<|end|>",     "<|start|>",   "assistant",  "<|channel|>",
                   "final",       "<|message|>", "x",           "\n",         "<|return|>"}));
  ASSERT_EQ(t.messages.size(), 3u);
  EXPECT_EQ(t.reasoning.value_or("?"), "Hello");
  EXPECT_EQ(t.content.value_or("?"), " world\nx\n");
  EXPECT_TRUE(t.calls.empty());
  std::vector<uint32_t> spelled = ids({"<|channel|>", "final", "<|message|>", "x"});
  for (uint32_t i = 0; i < vocab->size(); ++i)
    if (vocab->bytes(i) == "<|end|>" && !vocab->is_special(i)) spelled.push_back(i);
  t = nextok::parse_harmony_turn(*vocab, spelled);
  ASSERT_EQ(t.messages.size(), 1u);
  EXPECT_EQ(t.messages[0].content, "x<|end|>");
  EXPECT_FALSE(t.messages[0].complete);
}

TEST(Harmony, RejectsBadFormatsAndForeignVocabularies) {
  const auto index = TokenIndex::build(fragment_vocab(false));
  auto f = format_of(make_tools(index, true), true);
  f.tools[1].name = "get_weather";
  EXPECT_THROW(HarmonyCallGrammar::build(index, f), nextok::Error);
  f.tools[1].name = "bad name";
  EXPECT_THROW(HarmonyCallGrammar::build(index, f), nextok::Error);
  HarmonyCallFormat none;  // tool_choice none: no calls, a final answer
  EXPECT_NO_THROW(HarmonyCallGrammar::build(index, none));
  none.allow_final = false;  // nothing could end the turn
  EXPECT_THROW(HarmonyCallGrammar::build(index, none), nextok::Error);
  // A vocabulary without harmony's control tokens (SmolLM2, Llama, Qwen).
  const std::vector<std::string> plain = {"a", "b", "<eos>"};
  const uint32_t eos = 2;
  const auto other = TokenIndex::build(Vocabulary::from_token_bytes(plain, std::span(&eos, 1)));
  HarmonyCallFormat g;
  g.tools.push_back({"f", JsonGrammar::any_object(other)});
  try {
    HarmonyCallGrammar::build(other, g);
    FAIL() << "built a harmony grammar on a vocabulary without <|channel|>";
  } catch (const nextok::Error& e) {
    EXPECT_EQ(e.code(), nextok::ErrorCode::kUnsupported);
  }
}

std::filesystem::path gpt_oss_dir() {
  return std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "gpt-oss";
}

TEST(Harmony, GptOssVocabularyMatchesTheReference) {
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(gpt_oss_dir() / "tokenizer.json"),
                         "the gpt-oss tokenizer");
  const auto tok = nextok::Tokenizer::from_dir(gpt_oss_dir());
  const auto index = TokenIndex::build(tok.shared_vocab());
  const auto tools = make_tools(index, true);
  check_walks(index, tools, true, 2, 25);
  check_walks(index, tools, false, 2, 25);
  // What gpt-oss writes, tokenized as it would be: each spelling is read.
  const auto g = HarmonyCallGrammar::build(index, format_of(tools, true));
  std::vector<uint32_t> mask(nextok::bitmask_words(index->vocab().size()));
  for (const std::string text :
       {"<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>"
        "commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}"
        "<|call|>",
        " to=functions.ping<|channel|>commentary json<|message|>{}<|call|>",
        "<|channel|>final<|message|>It is sunny.<|return|>"}) {
    nextok::HarmonyCallConstraint c(g);
    const auto ids = tok.encode(text);
    for (const uint32_t t : ids) {
      c.step_mask(mask);
      ASSERT_TRUE(bit(mask, t)) << "'" << index->vocab().bytes(t) << "' in " << text;
      c.advance(t);
    }
    EXPECT_TRUE(c.turn_ended()) << text;
  }
}

}  // namespace

namespace {

// The prompt side, pinned here on a small case (test_harmony.py checks the
// renderer against transformers on the real template).
TEST(HarmonyChat, DetectsTheTemplateAndRendersACall) {
  const std::string source =
      "{{- \"<|start|>system<|message|>\" }}Knowledge cutoff: 2024-06 Reasoning: "
      "<|channel|>analysis<|message|> <|call|>";
  const auto t = nextok::ChatTemplate::detect(source, "<|startoftext|>", "<|return|>");
  ASSERT_EQ(t.format(), nextok::ChatFormat::kHarmony);
  EXPECT_STREQ(nextok::chat_format_name(t.format()), "harmony");
  std::vector<nextok::ChatMessage> m = {{"developer", "Be brief.", std::nullopt, {}},
                                        {"user", "Weather?", std::nullopt, {}},
                                        {"assistant", "", "Use the tool.", {{"ping", "{}"}}},
                                        {"tool", "pong \"ok\"", std::nullopt, {}}};
  nextok::ChatOptions opt;
  opt.current_date = "2026-12-05";
  opt.reasoning_effort = "low";
  opt.tools = {R"({"type": "function", "function": {"name": "ping", "description": "Ping."}})"};
  EXPECT_EQ(t.apply(m, opt),
            "<|start|>system<|message|>You are ChatGPT, a large language model trained by "
            "OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: 2026-12-05\n\nReasoning: low\n\n"
            "# Valid channels: analysis, commentary, final. Channel must be included for every "
            "message.\nCalls to these tools must go to the commentary channel: 'functions'."
            "<|end|><|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Tools\n\n"
            "## functions\n\nnamespace functions {\n\n// Ping.\ntype ping = () => any;\n\n} // "
            "namespace functions<|end|><|start|>user<|message|>Weather?<|end|>"
            "<|start|>assistant<|channel|>analysis<|message|>Use the tool.<|end|>"
            "<|start|>assistant to=functions.ping<|channel|>commentary json<|message|>{}<|call|>"
            "<|start|>functions.ping to=assistant<|channel|>commentary<|message|>"
            "\"pong \\\"ok\\\"\"<|end|><|start|>assistant");
  // What the template refuses.
  m.push_back({"assistant", "<|channel|>final<|message|>x", std::nullopt, {}});
  EXPECT_THROW((void)t.apply(m, opt), nextok::Error);
  const std::vector<nextok::ChatMessage> orphan = {{"user", "a", std::nullopt, {}},
                                                   {"tool", "42", std::nullopt, {}}};
  EXPECT_THROW((void)t.apply(orphan, opt), nextok::Error);
  // Harmony's options elsewhere are refused.
  const auto qwen = nextok::ChatTemplate::of_format(nextok::ChatFormat::kQwen3, "", "<|im_end|>");
  EXPECT_THROW((void)qwen.apply(orphan, opt), nextok::Error);
}

}  // namespace
