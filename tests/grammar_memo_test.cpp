// The grammar walker's shortcuts on a real vocabulary: masks memoised by
// parser state (shared by every matcher of a grammar, from several
// threads) and free-text subtrees set without walking them. Checked
// against the same grammar without the memo and, token by token, against
// the Earley recogniser reading each token's bytes.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "grammar_test_util.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "constraint/engine/token_index_impl.hpp"
#include "constraint/trie/free_text_masks.hpp"
#include "constraint/trie/token_trie.hpp"
#include "nextok/grammar.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"
#include "vocab/utf8.hpp"

namespace {

using nextok::Grammar;
using nextok::GrammarConstraint;
using nextok::grammar_test::bit;

std::shared_ptr<const nextok::Vocabulary> llama_vocab() {
#ifdef NEXTOK_TOKENIZERS_DIR
  const auto dir = std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1";
#else
  const auto dir = std::filesystem::path("/nonexistent");
#endif
  if (!std::filesystem::exists(dir / "tokenizer.json")) return nullptr;
  static const auto vocab = nextok::load_vocabulary(dir);
  return vocab;
}

TEST(TokenTrie, BytesBelowAndSubtreeTokensFollowTheTokens) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const nextok::constraint::TokenTrie trie(*vocab);
  const auto nodes = trie.nodes();
  const auto below = trie.bytes_below();
  ASSERT_EQ(below.size(), nodes.size());
  // The path to each node, kept along the depth-first order.
  std::string path;
  size_t checked = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    path.resize(nodes[i].depth - 1u);
    path.push_back(static_cast<char>(nodes[i].byte));
    const auto ids = trie.subtree_tokens(i);
    // Every 37th node in full: its tokens start with the path, their bytes
    // after it make up `below`, and no other token starts with the path.
    if (i % 37 != 0) continue;
    nextok::constraint::TokenTrie::Bytes want{};
    for (uint32_t id : ids) {
      const std::string_view b = vocab->bytes(id);
      ASSERT_TRUE(b.starts_with(path)) << i;
      for (unsigned char c : b.substr(path.size())) want[c >> 6] |= uint64_t{1} << (c & 63);
    }
    EXPECT_EQ(below[i], want) << "node " << i;
    if (i % (37 * 40) == 0) {
      size_t count = 0;
      for (uint32_t id = 0; id < vocab->size(); ++id) {
        if (vocab->is_special(id) || vocab->is_eos(id)) continue;
        count += vocab->bytes(id).starts_with(path) && !vocab->bytes(id).empty();
      }
      EXPECT_EQ(count, ids.size()) << "node " << i;
    }
    ++checked;
  }
  EXPECT_GT(checked, 5000u);
}

uint32_t token(const nextok::Vocabulary& v, std::string_view bytes) {
  for (uint32_t id = 0; id < v.size(); ++id) {
    if (!v.is_special(id) && v.bytes(id) == bytes) return id;
  }
  ADD_FAILURE() << "no token '" << bytes << "'";
  return 0;
}

// utf8_below's bit 0 against the tokenizer's own UTF-8 checks (not the
// trie's reader): bytes are a well-formed start when everything but a cut
// short last character is valid UTF-8.
bool well_formed_prefix(std::string_view b) {
  return nextok::vocab::utf8_first_invalid(b.substr(0, nextok::vocab::utf8_complete_prefix(b))) ==
         std::string_view::npos;
}

// The trie's UTF-8 reader against the tokenizer's checks on every string of
// one to three bytes, and on four-byte strings after each 4-byte lead.
TEST(TokenTrie, Utf8ReaderAgreesWithTheTokenizersChecks) {
  const auto reader_ok = [](std::string_view b) {
    int st = 0;
    for (unsigned char c : b) {
      if ((st = nextok::constraint::Utf8Reader::next(st, c)) < 0) return false;
    }
    return true;
  };
  size_t checked = 0, bad = 0;
  std::string b;
  const auto check = [&] {
    const bool want = well_formed_prefix(b), got = reader_ok(b);
    if (want != got && ++bad <= 5) ADD_FAILURE() << "bytes " << ::testing::PrintToString(b);
    ++checked;
  };
  for (unsigned x = 0; x < 256; ++x) {
    for (unsigned y = 0; y <= 256; ++y) {
      for (unsigned z = 0; z <= 256 && (y < 256 || z == 256); ++z) {
        b.assign(1, static_cast<char>(x));
        if (y < 256) b.push_back(static_cast<char>(y));
        if (z < 256) b.push_back(static_cast<char>(z));
        check();
      }
    }
  }
  for (unsigned x = 0xF0; x <= 0xF4; ++x) {
    for (unsigned y = 0x80; y <= 0xC0; ++y) {
      for (unsigned z = 0x7F; z <= 0xC0; ++z) {
        for (unsigned w = 0x7F; w <= 0xC0; ++w) {
          b = {static_cast<char>(x), static_cast<char>(y), static_cast<char>(z),
               static_cast<char>(w)};
          check();
        }
      }
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(checked, 16000000u);
}

TEST(TokenTrie, Utf8BelowFollowsTheTokens) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const nextok::constraint::TokenTrie trie(*vocab);
  const auto nodes = trie.nodes();
  const auto utf8 = trie.utf8_below();
  size_t yes = 0, no = 0;
  for (size_t i = 1; i < nodes.size(); i += 7) {
    bool want = true;
    for (uint32_t id : trie.subtree_tokens(i)) {
      want = want && well_formed_prefix(vocab->bytes(id).substr(nodes[i].depth));
    }
    EXPECT_EQ((utf8[i] & 1) != 0, want) << "node " << i;
    (want ? yes : no) += 1;
  }
  EXPECT_GT(yes, 1000u);
  EXPECT_GT(no, 100u);
}

// Inside a string of any code points, every token the recogniser reads is
// allowed and no other: the whole vocabulary, at states where the UTF-8
// shortcut applies (after ASCII, after a full character, inside one), and
// in a grammar where a long character leads to another state (no two in a
// row), where the shortcut must not apply.
TEST(GrammarMemo, StringStatesEqualTheRecogniserOnEveryToken) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const auto index = nextok::TokenIndex::build(vocab);
  struct Probe {
    const char* gbnf;
    std::vector<std::string> prefixes;
  };
  const Probe probes[] = {
      {"root ::= \"\\\"\" ([^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" [\"\\\\nt])* \"\\\"\" [ ]?\n",
       {"\"", "\"ab", "\"\xc3\xa9", "\"\xe2\x82"}},
      {"root ::= ([a-z] | [^\\x00-\\x7F] [a-z])+\n", {"a", "ab"}},
      // Free text the walk starts in (after a quote, or inside), with more
      // grammar after the string, escapes, and bytes that die inside it
      // (recursive, so Earley rather than a DFA reads it).
      {"root ::= \"[\" item (\",\" \" \"? item)* \"]\"\nitem ::= str | root\n"
       "str ::= \"\\\"\" ([^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" [\"\\\\nt])* \"\\\"\"\n",
       {"[\"", "[\"ab", "[\"a\\", "[\"a\\n", "[\"ab\",\"", "[\"\xe2\x82\xac"}},
      // The first byte leads to a free-text state that reads fewer bytes
      // than led to it, and which ";" leaves; and comments.
      {"root ::= \"(\" root \")\" | s \";\"\ns ::= s [ -:<-z] | [ -~]\n", {"", "(", "((a", "(ab"}},
      {"root ::= (\"#\" [^\\n]* \"\\n\")+\n", {"#", "#ab", "#ab\n#"}},
      // Characters of two bytes or more: not as the first one, and not two
      // in a row.
      {"root ::= \"[\" item (\",\" item)* \"]\"\nitem ::= str | root\n"
       "str ::= \"\\\"\" s \"\\\"\"\ns ::= s [^\"\\\\] | [ -!#-~]\n",
       {"[\"", "[\"a", "[\"a\xc3\xa9", "[\"a\xe2\x82"}},
      {"root ::= \"(\" root \")\" | s \";\"\ns ::= s c | c\nc ::= [ -:<-~] | [^\\x00-\\x7F] [ "
       "-:<-~]\n",
       {"(", "(a", "(a\xc3\xa9"}},
      // The same without recursion: a DFA reads them.
      {"root ::= s \";\"\ns ::= s [ -:<-z] | [ -~]\n", {"", "ab"}},
      {"root ::= \"\\\"\" s \"\\\"\"\ns ::= s [^\"\\\\] | [ -!#-~]\n",
       {"\"", "\"a", "\"a\xc3\xa9"}},
      {"root ::= s \";\"\ns ::= s c | c\nc ::= [ -:<-~] | [^\\x00-\\x7F] [ -:<-~]\n",
       {"", "a", "a\xc3\xa9"}},
      // Names that keywords may follow with no space between (Lark sql):
      // inside a name the state tracks keyword prefixes byte by byte, while
      // the name's own loop item stays; two names with different loops at
      // once; a loop through a nonterminal with a two-byte alternative.
      {"root ::= \"(\" root \")\" | \"s\" name (kw name)*\nname ::= [a-zA-Z_] [a-zA-Z0-9_]*\n"
       "kw ::= [fF] [rR] [oO] [mM] | [aA] [sS] | \" \"\n",
       {"sab", "(sa", "sabfr", "sa as", "safromb"}},
      {"root ::= \"(\" root \")\" | id\nid ::= [a-z] [a-m]* \";\" | [a-z] [h-z]* \"(\" root "
       "\")\"\n",
       {"a", "(ah", "(ao"}},
      {"root ::= \"(\" root \")\" | \"<\" s \">\"\ns ::= s c | c\nc ::= [a-m] | [n-z] [a-m] | "
       "\"-\"\n",
       {"<a", "(<ab", "<an"}},
  };
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()));
  for (const Probe& probe : probes) {
    const auto g = Grammar::gbnf(index, probe.gbnf);
    for (const std::string& p : probe.prefixes) {
      GrammarConstraint m(g);
      // One single-byte token per byte (the vocabulary holds every byte).
      for (unsigned char c : p) m.advance(token(*vocab, std::string(1, static_cast<char>(c))));
      m.step_mask(mask);
      size_t allowed = 0;
      for (uint32_t id = 0; id < vocab->size(); ++id) {
        if (vocab->is_special(id) || vocab->is_eos(id) || vocab->bytes(id).empty()) continue;
        const bool want = m.accepts_bytes(vocab->bytes(id));
        EXPECT_EQ(bit(mask, id), want) << probe.gbnf << " after '" << p << "' token " << id;
        allowed += want;
      }
      // Inside a character only tokens that go on with a continuation byte fit.
      EXPECT_GT(allowed, !p.empty() && p.back() == '\x82' ? 50u : 1000u) << p;
    }
  }
}

struct Case {
  const char* name;
  bool lark;
  const char* text;
};

const Case kCases[] = {
    {"csv", true,
     "start: row (_EOL row)* _EOL?\nrow: field (\",\" field)*\nfield: QUOTED | BARE |\n"
     "QUOTED: \"\\\"\" /([^\"]|\"\")*/ \"\\\"\"\nBARE: /[^,\"\\r\\n]+/\n_EOL: \"\\r\"? \"\\n\"\n"},
    {"words", true,
     "start: sentence+\nsentence: WORD (\" \" WORD)* \".\" \" \"?\nWORD: "
     "/[A-Za-z\\u00e0-\\u00ff]+/\n"},
    {"kv", false,
     "root ::= pair (\"\\n\" pair)*\npair ::= key \"=\" value\nkey ::= [a-z_]+\n"
     "value ::= [^\\n]* | \"\\\"\" [^\"]* \"\\\"\"\n"},
    // Nesting lives in the origins: equal items, different depths.
    {"nest", false, "root ::= expr\nexpr ::= \"(\" expr (\" \" expr)* \")\" | [a-z]+\n"},
};

// One random walk: at each step the memoised mask must equal the mask of
// the grammar without memo; now and then a rollback or a clone.
size_t walk(const std::shared_ptr<const Grammar>& memo, const std::shared_ptr<const Grammar>& plain,
            unsigned seed, int steps, bool brute) {
  const auto& vocab = memo->index().vocab();
  std::mt19937 rng(seed);
  std::vector<uint32_t> a(nextok::bitmask_words(vocab.size())), b(a.size());
  auto m = std::make_unique<GrammarConstraint>(memo);
  GrammarConstraint ref(plain);
  size_t checked = 0;
  for (int s = 0; s < steps; ++s) {
    m->step_mask(a);
    ref.step_mask(b);
    EXPECT_EQ(a, b) << "seed " << seed << " step " << s;
    if (a != b) return checked;
    ++checked;
    if (brute) {
      // A sample of tokens, each read byte by byte by the recogniser.
      for (int k = 0; k < 1500; ++k) {
        const auto id = static_cast<uint32_t>(rng() % vocab.size());
        if (vocab.is_special(id) || vocab.is_eos(id) || vocab.bytes(id).empty()) continue;
        EXPECT_EQ(bit(a, id), ref.accepts_bytes(vocab.bytes(id)))
            << "seed " << seed << " step " << s << " token '" << vocab.bytes(id) << "'";
      }
    }
    std::vector<uint32_t> allowed;
    for (uint32_t id = 0; id < vocab.size(); ++id) {
      if (bit(a, id) && !vocab.is_eos(id)) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    const uint32_t id = allowed[rng() % allowed.size()];
    m->advance(id);
    ref.advance(id);
    if (rng() % 5 == 0 && m->steps() > 1) {
      m->rollback(1);
      ref.rollback(1);
    } else if (rng() % 5 == 0) {
      m = std::make_unique<GrammarConstraint>(*m);
    }
  }
  return checked;
}

TEST(GrammarMemo, MasksEqualTheUnmemoisedGrammarFromSeveralThreads) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const auto index = nextok::TokenIndex::build(vocab);
  nextok::ConstraintLimits off;
  off.grammar_mask_memo_bytes = 0;
  for (const Case& c : kCases) {
    const auto memo = c.lark ? Grammar::lark(index, c.text) : Grammar::gbnf(index, c.text);
    const auto plain =
        c.lark ? Grammar::lark(index, c.text, off) : Grammar::gbnf(index, c.text, off);
    size_t checked = walk(memo, plain, 1, 12, /*brute=*/true);
    // Threads share the memoised grammar; each checks its own walks.
    std::vector<size_t> per(3, 0);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < per.size(); ++t) {
      threads.emplace_back([&, t] {
        for (unsigned w = 0; w < 3; ++w) per[t] += walk(memo, plain, 100 * (t + 1) + w, 10, false);
      });
    }
    for (auto& th : threads) th.join();
    for (size_t n : per) checked += n;
    EXPECT_GT(checked, 40u) << c.name;
  }
}

// The kept mask of a free-text state (a string's inside) belongs to the
// trie: two grammars, each with its own walkers, and threads make it once.
TEST(GrammarMemo, FreeTextMasksAreMadeOncePerTrie) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const auto index = nextok::TokenIndex::build(vocab);
  const auto& masks = index->impl().trie.free_text_masks();
  const size_t before = masks.made();
  const std::string text =
      "root ::= \"[\" str (\",\" str)* \"]\"\nstr ::= \"\\\"\" [^\"]* \"\\\"\"\n";
  const nextok::Vocabulary& v = *vocab;
  // The token for `["` and one for `a`, read into the string.
  const uint32_t open = token(v, "[\""), a = token(v, "a");
  ASSERT_NE(open, 0u);
  std::vector<std::vector<uint32_t>> got;
  std::vector<std::thread> threads;
  std::mutex mu;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      const auto g = Grammar::gbnf(index, text);  // its own walkers and memo
      GrammarConstraint m(g);
      std::vector<uint32_t> mask(nextok::bitmask_words(v.size()));
      m.advance(open);
      m.step_mask(mask);
      m.advance(a);
      m.step_mask(mask);
      std::lock_guard lock(mu);
      got.push_back(mask);
    });
  }
  for (auto& th : threads) th.join();
  const size_t made = masks.made() - before;
  EXPECT_GE(made, 1u);
  // Threads that race may each make it; a later grammar never does.
  EXPECT_LE(made, 4u);
  for (const auto& m : got) EXPECT_EQ(m, got[0]);
  const size_t after_threads = masks.made();
  const auto g = Grammar::gbnf(index, text);
  GrammarConstraint m(g);
  std::vector<uint32_t> mask(nextok::bitmask_words(v.size()));
  m.advance(open);
  m.step_mask(mask);
  EXPECT_EQ(masks.made(), after_threads);
  EXPECT_EQ(mask, got[0]);
  EXPECT_TRUE(bit(mask, a));
}

// Equal items whose origins lie at different nesting depths are different
// states: the memo must tell "((a" from "(a" although their last sets hold
// the same items.
TEST(GrammarMemo, NestingInTheOriginsIsPartOfTheState) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const auto index = nextok::TokenIndex::build(vocab);
  const auto g = Grammar::gbnf(index, kCases[3].text);
  const uint32_t open = token(*vocab, "("), a = token(*vocab, "a"), two = token(*vocab, "))");
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()));
  GrammarConstraint deep(g), shallow(g);
  for (uint32_t id : {open, open, a}) deep.advance(id);
  deep.step_mask(mask);
  EXPECT_TRUE(bit(mask, two)) << "((a then ))";
  for (uint32_t id : {open, a}) shallow.advance(id);
  shallow.step_mask(mask);
  EXPECT_FALSE(bit(mask, two)) << "(a then ))";
  shallow.advance(token(*vocab, ")"));
  shallow.step_mask(mask);
  EXPECT_FALSE(bit(mask, open)) << "(a) is complete";
}

TEST(GrammarMemo, ATinyBudgetStillGivesExactMasks) {
  const auto vocab = llama_vocab();
  NEXTOK_REQUIRE_FIXTURE(vocab, "tokenizers/llama3.1");
  const auto index = nextok::TokenIndex::build(vocab);
  nextok::ConstraintLimits tiny, off;
  tiny.grammar_mask_memo_bytes = 40000;  // about two masks: eviction on every walk
  off.grammar_mask_memo_bytes = 0;
  // Past the names' budget matchers name sets themselves; the grammar's
  // walkers pass from matcher to matcher (and clone) and must not read one
  // matcher's own names as another's.
  for (const Case& c : kCases) {
    const auto memo =
        c.lark ? Grammar::lark(index, c.text, tiny) : Grammar::gbnf(index, c.text, tiny);
    const auto plain =
        c.lark ? Grammar::lark(index, c.text, off) : Grammar::gbnf(index, c.text, off);
    size_t checked = 0;
    for (unsigned w = 0; w < 4; ++w) checked += walk(memo, plain, 7 + w, 12, false);
    EXPECT_GT(checked, 20u) << c.name;
  }
}

}  // namespace

// The kept masks from the token index (lists of what each missing byte rules
// out) equal the walk of the trie's free-text paths, for a string's inside,
// a comment's, and random descriptions, on real vocabularies.
TEST(FreeTextMasks, TheIndexEqualsTheWalk) {
  using nextok::constraint::FreeText;
  using nextok::constraint::FreeTextMasks;
  std::vector<std::shared_ptr<const nextok::Vocabulary>> vocabs{llama_vocab()};
  NEXTOK_REQUIRE_FIXTURE(vocabs[0], "tokenizers/llama3.1");
#ifdef NEXTOK_TOKENIZERS_DIR
  const auto qwen = std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "qwen3";
  if (std::filesystem::exists(qwen / "tokenizer.json"))
    vocabs.push_back(nextok::load_vocabulary(qwen));
#endif
  std::mt19937 rng(17);
  size_t indexed = 0;
  for (const auto& vocab : vocabs) {
    const nextok::constraint::TokenTrie trie(*vocab);
    FreeTextMasks masks;
    std::vector<FreeText> states;
    FreeText str, comment;
    for (unsigned b = 0x20; b < 0x7F; ++b) {
      if (b != '"' && b != '\\') str.loop[b >> 6] |= uint64_t{1} << (b & 63);
    }
    str.first = str.loop;
    str.closed = str.first_wide = true;
    for (unsigned b = 0; b < 0x80; ++b) {
      if (b != '\n') comment.loop[b >> 6] |= uint64_t{1} << (b & 63);
    }
    comment.first = comment.loop;
    comment.closed = comment.first_wide = true;
    states = {str, comment};
    for (int k = 0; k < 24; ++k) {
      FreeText f;
      for (unsigned b = 0; b < 0x80; ++b) {
        if (rng() % 100 < 96) f.loop[b >> 6] |= uint64_t{1} << (b & 63);
      }
      f.first = f.loop;
      for (int drop = 0; drop < 3; ++drop) {
        const unsigned b = rng() % 0x80;
        f.first[b >> 6] &= ~(uint64_t{1} << (b & 63));
      }
      f.closed = rng() % 2 != 0;
      f.first_wide = rng() % 2 != 0;
      states.push_back(f);
    }
    for (const FreeText& f : states) {
      const auto fast = masks.from_index(trie, f);
      if (!fast) continue;
      ++indexed;
      const auto slow = FreeTextMasks::walk(trie, f);
      ASSERT_EQ(**fast, *slow);
    }
    // A string's inside is the case the index is for.
    EXPECT_TRUE(masks.from_index(trie, str).has_value());
  }
  EXPECT_GE(indexed, 20u);
}
