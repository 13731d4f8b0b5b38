// ThinkSplitter and stop-string matching on their own: every way a marker or
// a stop string can be cut across pieces.
#include <gtest/gtest.h>

#include "decode/stop_strings.hpp"
#include "nextok/error.hpp"
#include "nextok/think.hpp"
#include "support/decode_fixture.hpp"

using namespace nextok;

namespace {

struct Split {
  std::string reasoning, content;
};

Split run(ThinkOptions opt, const std::vector<std::string>& pieces) {
  ThinkSplitter s(std::move(opt));
  ThinkSplitter::Routed r;
  for (const auto& p : pieces) s.push(p, r);
  s.flush(r);
  return {r.reasoning, r.content};
}

ThinkOptions enabled(bool starts_open = false) {
  ThinkOptions o;
  o.enabled = true;
  o.starts_open = starts_open;
  return o;
}

// Every split of `text` into pieces at every pair of cut points.
std::vector<std::vector<std::string>> all_two_cuts(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); ++b) {
      out.push_back({text.substr(0, a), text.substr(a, b - a), text.substr(b)});
    }
  }
  return out;
}

}  // namespace

TEST(ThinkSplitter, RoutesABlockAtTheStartForEverySplitOfTheMarkers) {
  const std::string text = "\n<think>\nplan: x < y </thin k></think>\n\nThe answer</think>";
  for (const auto& pieces : all_two_cuts(text)) {
    const Split s = run(enabled(), pieces);
    ASSERT_EQ(s.reasoning, "\nplan: x < y </thin k>") << pieces[0] << "|" << pieces[1];
    ASSERT_EQ(s.content, "\n\nThe answer</think>");
  }
}

TEST(ThinkSplitter, PrefilledOpenBlockAndNoBlock) {
  for (const auto& pieces : all_two_cuts("step 1</think>{\"a\":1}")) {
    const Split s = run(enabled(true), pieces);
    ASSERT_EQ(s.reasoning, "step 1");
    ASSERT_EQ(s.content, "{\"a\":1}");
  }
  // Text that does not start with <think> is content, even if it mentions it.
  EXPECT_EQ(run(enabled(), {"Hello <think> x"}).content, "Hello <think> x");
  EXPECT_EQ(run(enabled(), {"<th", "ink-free"}).content, "<think-free");
  // An unclosed block ends as reasoning; a prefix of the marker is released.
  const Split open = run(enabled(), {"<think>", "abc</th"});
  EXPECT_EQ(open.reasoning, "abc</th");
  EXPECT_EQ(open.content, "");
  // Disabled: everything is content.
  EXPECT_EQ(run(ThinkOptions{}, {"<think>a</think>b"}).content, "<think>a</think>b");
}

TEST(ThinkSplitter, BudgetLatchesOnceWhenTheCountExceedsIt) {
  ThinkOptions o = enabled(true);
  o.budget = 2;
  ThinkSplitter s(o);
  ThinkSplitter::Routed r;
  s.push("a", r);
  s.push("b", r);
  EXPECT_FALSE(s.take_force_close());
  s.push("c", r);  // the third piece exceeds a budget of two
  EXPECT_TRUE(s.take_force_close());
  EXPECT_FALSE(s.take_force_close());
  s.push("d", r);
  EXPECT_FALSE(s.take_force_close()) << "force_close fires once per output";
  EXPECT_EQ(s.reasoning_pieces(), 4u);
  // No budget: never latches, whatever the count.
  ThinkSplitter free(enabled(true));
  for (int i = 0; i < 1000; ++i) free.push("x", r);
  EXPECT_FALSE(free.take_force_close());
}

TEST(ThinkSplitter, BadMarkersAreInvalidArguments) {
  ThinkOptions o = enabled();
  o.close = "";
  EXPECT_THROW(ThinkSplitter{o}, Error);
  o.close = o.open;
  EXPECT_THROW(ThinkSplitter{o}, Error);
}

TEST(StopStrings, MatchAcrossEverySplitAndTrimTheText) {
  const std::string text = "ENTER the END. more";
  for (const auto& pieces : all_two_cuts(text)) {
    decode::StopStrings stop({"END", "the E"});
    std::string out;
    for (const auto& p : pieces) out += stop.push(p);
    ASSERT_TRUE(stop.matched());
    ASSERT_EQ(out, "ENTER ") << pieces[0] << "|" << pieces[1];
    ASSERT_EQ(stop.matched_string(), "the E");
  }
  decode::StopStrings none({"zzz"});
  std::string out = none.push("ab zz");
  EXPECT_EQ(out, "ab ");  // "zz" may begin the stop string
  out += none.push("y");
  out += none.flush();
  EXPECT_EQ(out, "ab zzy");
  EXPECT_FALSE(none.matched());
}

TEST(StopStrings, BadStopListsAreInvalidArguments) {
  EXPECT_THROW(decode::StopStrings({""}), Error);
  EXPECT_THROW(decode::StopStrings({std::string(2000, 'a')}), Error);
  EXPECT_THROW(decode::StopStrings(std::vector<std::string>(17, "a")), Error);
  try {
    decode::StopStrings({""});
  } catch (const Error& e) {
    EXPECT_EQ(e.param(), "stop");
  }
}

namespace nextok {
namespace {

// Think routing from the vocabulary and the rendered prompt; a budget needs
// the markers.
TEST(ThinkOptionsFor, FromVocabularyAndPrompt) {
  const Vocabulary& qwen = testing::qwen3().vocab();
  const ThinkOptions open = think_options_for(qwen, "<|im_start|>assistant\n<think>\n", 7u);
  EXPECT_TRUE(open.enabled);
  EXPECT_TRUE(open.starts_open);
  EXPECT_EQ(open.budget, 7u);
  const ThinkOptions closed = think_options_for(qwen, "<think>\n\n</think>\n\n");
  EXPECT_TRUE(closed.enabled);
  EXPECT_FALSE(closed.starts_open);
  EXPECT_FALSE(closed.budget.has_value());

  const auto llama = Tokenizer::from_dir(std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1");
  EXPECT_FALSE(think_options_for(llama.vocab(), "<think>").enabled);
  try {
    think_options_for(llama.vocab(), "hi", 5u);
    ADD_FAILURE() << "a budget without think tokens must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.param(), "thinking_budget");
  }
}

}  // namespace
}  // namespace nextok
