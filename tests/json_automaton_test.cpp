// The reference JSON automaton against nlohmann::json's parser on random
// byte strings, viable prefixes of valid documents, and its json_object
// masks over the real Llama-3.1 vocabulary: every token of a valid document
// is allowed, EOS only at the end, random constrained generations always
// parse as objects, and the schema engine's any_object gives the same masks.
#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"
#include "reference/json_automaton.hpp"
#include "reference/json_object_masks.hpp"

namespace {

using nextok::reference::JsonAutomaton;
using nextok::reference::JsonAutomatonOptions;
using nextok::reference::JsonAutomatonState;

bool accepts(const JsonAutomaton& g, std::string_view s, bool& viable) {
  JsonAutomatonState st = g.start(), next;
  viable = true;
  for (unsigned char c : s) {
    if (!g.step(st, c, next)) {
      viable = false;
      return false;
    }
    st = next;
  }
  return g.complete(st);
}

size_t longest_ws_run(std::string_view s) {
  size_t best = 0, run = 0;
  for (char c : s) {
    run = (c == ' ' || c == '\n' || c == '\t' || c == '\r') ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

bool has_long_exponent(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != 'e' && s[i] != 'E') continue;
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t digits = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++digits;
    if (digits >= 3) return true;
  }
  return false;
}

TEST(JsonAutomaton, AgreesWithNlohmannOnRandomStrings) {
  const std::vector<std::string> pieces = {"{",
                                           "}",
                                           "[",
                                           "]",
                                           ",",
                                           ":",
                                           "\"",
                                           "\"k\"",
                                           "\"v\"",
                                           "1",
                                           "0",
                                           "-",
                                           ".",
                                           "e",
                                           "E",
                                           "+",
                                           "true",
                                           "false",
                                           "null",
                                           "nul",
                                           " ",
                                           "\n",
                                           "\\",
                                           "\\n",
                                           "\\u00e9",
                                           "\\u12",
                                           "\\x",
                                           "\xC3\xA9",
                                           "\xF0\x9F\x98\x80",
                                           "\xC3",
                                           "\x01",
                                           "a",
                                           "12",
                                           "-0.5e+3",
                                           "00",
                                           "{\"a\":1}"};
  std::mt19937 rng(17);
  size_t valid = 0;
  for (bool object_only : {true, false}) {
    JsonAutomatonOptions opt;
    opt.object_only = object_only;
    const JsonAutomaton g(opt);
    for (int k = 0; k < 200000; ++k) {
      std::string s;
      const size_t n = 1 + rng() % 10;
      for (size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
      if (longest_ws_run(s) > opt.max_whitespace) continue;
      bool viable = false;
      const bool ours = accepts(g, s, viable);
      // nlohmann refuses numbers past double range (1e999) that RFC 8259's
      // grammar, and this automaton, accept: leave long exponents out.
      if (has_long_exponent(s)) continue;
      bool ref = false;
      try {
        const bool is_object = nlohmann::json::parse(s).is_object();
        ref = !object_only || is_object;
      } catch (const nlohmann::json::exception&) {
        ref = false;
      }
      ASSERT_EQ(ours, ref) << "object_only=" << object_only << " text: " << s;
      valid += ref;
    }
  }
  EXPECT_GT(valid, 1000u);  // the generator does reach valid documents
}

nlohmann::json random_value(std::mt19937& rng, int depth) {
  const int kind = depth > 4 ? static_cast<int>(rng() % 4) : static_cast<int>(rng() % 6);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return (rng() % 2) == 0;
    case 2:
      return static_cast<double>(static_cast<int>(rng() % 20001) - 10000) / 7.0;
    case 3: {
      static const char* strs[] = {"", "a", "é\"\\\n\t", "😀 ok", "\x01\x1f", "long string here"};
      return strs[rng() % 6];
    }
    case 4: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) {
        std::string key = "k";
        key += std::to_string(rng() % 100);
        o[key] = random_value(rng, depth + 1);
      }
      return o;
    }
  }
}

nlohmann::json random_object(std::mt19937& rng) {
  nlohmann::json o = nlohmann::json::object();
  for (int i = 1 + static_cast<int>(rng() % 4); i > 0; --i) {
    std::string key = "key";
    key += std::to_string(i);
    o[key] = random_value(rng, 1);
  }
  return o;
}

TEST(JsonAutomaton, EveryPrefixOfAValidDocumentIsViable) {
  std::mt19937 rng(5);
  const JsonAutomaton g;
  for (int k = 0; k < 2000; ++k) {
    const std::string doc = random_object(rng).dump(k % 3 == 0 ? -1 : 2);
    bool viable = false;
    ASSERT_TRUE(accepts(g, doc, viable)) << doc;
  }
}

std::filesystem::path llama_dir() {
#ifdef NEXTOK_TOKENIZERS_DIR
  return std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1";
#else
  return "/nonexistent";
#endif
}

TEST(JsonObjectMasks, ValidDocumentsPassTokenByTokenAndEosOnlyAtTheEnd) {
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(llama_dir() / "tokenizer.json"), "no Llama-3.1");
  const auto tok = nextok::Tokenizer::from_dir(llama_dir());
  auto vocab = tok.shared_vocab();
  auto trie = std::make_shared<const nextok::constraint::TokenTrie>(*vocab);
  nextok::reference::JsonObjectMasks c(vocab, trie);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()));
  const uint32_t eos = vocab->eos_ids()[0];
  auto allowed = [&](uint32_t id) { return (mask[id >> 5] >> (id & 31)) & 1u; };
  std::mt19937 rng(9);
  for (int k = 0; k < 40; ++k) {
    const std::string doc = random_object(rng).dump(k % 2 == 0 ? -1 : 2);
    c.reset();
    for (uint32_t id : tok.encode(doc)) {
      c.step_mask(mask);
      ASSERT_TRUE(allowed(id)) << doc << "\nrefused token " << id << " '" << vocab->bytes(id)
                               << "'";
      ASSERT_FALSE(allowed(eos)) << "EOS allowed inside " << doc;
      c.advance(id);
    }
    c.step_mask(mask);
    EXPECT_TRUE(allowed(eos)) << doc;
    c.advance(eos);
    EXPECT_TRUE(c.finished());
  }
  // A refused token is an error and leaves the state unchanged.
  c.reset();
  EXPECT_THROW(c.advance(tok.encode("[")[0]), nextok::Error);
  EXPECT_THROW(c.advance(eos), nextok::Error);
  EXPECT_EQ(c.steps(), 0u);
}

TEST(JsonObjectMasks, RandomConstrainedGenerationsAreValidObjects) {
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(llama_dir() / "tokenizer.json"), "no Llama-3.1");
  auto vocab = nextok::load_vocabulary(llama_dir());
  auto trie = std::make_shared<const nextok::constraint::TokenTrie>(*vocab);
  nextok::reference::JsonObjectMasks c(vocab, trie);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()));
  std::mt19937 rng(21);
  int finished = 0;
  std::vector<uint32_t> ids;
  for (int run = 0; run < 24; ++run) {
    c.reset();
    std::string out;
    for (int step = 0; step < 300 && !c.finished(); ++step) {
      c.step_mask(mask);
      ids.clear();
      for (size_t w = 0; w < mask.size(); ++w) {
        for (uint32_t bits = mask[w]; bits != 0; bits &= bits - 1) {
          ids.push_back(static_cast<uint32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(bits))));
        }
      }
      ASSERT_FALSE(ids.empty()) << "no token allowed after: " << out;
      // Prefer short structural tokens now and then so objects close.
      uint32_t pick = ids[rng() % ids.size()];
      if (c.is_complete() && rng() % 2 == 0) pick = vocab->eos_ids()[0];
      if (step > 120) {
        for (uint32_t id : ids) {
          const auto b = vocab->bytes(id);
          if (vocab->is_eos(id) || b == "}" || b == "]" || b == "\"" || b == "0" || b == ":" ||
              b == "1") {
            pick = id;
            break;
          }
        }
      }
      c.advance(pick);
      if (!vocab->is_eos(pick)) out.append(vocab->bytes(pick));
    }
    if (!c.finished()) continue;
    ++finished;
    ASSERT_TRUE(nlohmann::json::accept(out)) << out;
    EXPECT_TRUE(nlohmann::json::parse(out).is_object()) << out;
  }
  EXPECT_GT(finished, 12);
}

}  // namespace

// Differential: the schema engine's any_object against this independent
// automaton, mask for mask, along random walks through both. A walk picks
// among the tokens both allow, closing structures late so many walks end.
TEST(JsonObjectMasks, AgreesWithTheSchemaEnginesAnyObject) {
  NEXTOK_REQUIRE_FIXTURE(std::filesystem::exists(llama_dir() / "tokenizer.json"), "no Llama-3.1");
  auto vocab = nextok::load_vocabulary(llama_dir());
  auto trie = std::make_shared<const nextok::constraint::TokenTrie>(*vocab);
  nextok::reference::JsonObjectMasks ref(vocab, trie);
  nextok::JsonConstraint engine(nextok::JsonGrammar::any_object(nextok::TokenIndex::build(vocab)));
  const size_t words = nextok::bitmask_words(vocab->size());
  std::vector<uint32_t> a(words), b(words);
  std::mt19937 rng(77);
  std::vector<uint32_t> both;
  int finished = 0;
  size_t compared = 0;
  for (int run = 0; run < 24; ++run) {
    ref.reset();
    engine.reset();
    std::string out;
    for (int step = 0; step < 160 && !ref.finished(); ++step) {
      ref.step_mask(a);
      engine.step_mask(b);
      ++compared;
      for (size_t w = 0; w < words; ++w) {
        if (a[w] == b[w]) continue;
        const uint32_t diff = a[w] ^ b[w];
        const uint32_t id =
            static_cast<uint32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(diff)));
        FAIL() << "after '" << out << "' token " << id << " '" << vocab->bytes(id)
               << "': reference " << ((a[w] >> (id & 31)) & 1u) << ", engine "
               << ((b[w] >> (id & 31)) & 1u);
      }
      both.clear();
      for (size_t w = 0; w < words; ++w) {
        for (uint32_t bits = a[w]; bits != 0; bits &= bits - 1) {
          both.push_back(static_cast<uint32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(bits))));
        }
      }
      ASSERT_FALSE(both.empty()) << "dead end after: " << out;
      uint32_t pick = both[rng() % both.size()];
      if (ref.is_complete() && rng() % 2 == 0) pick = vocab->eos_ids()[0];
      if (step > 80) {
        for (uint32_t id : both) {
          const auto bytes = vocab->bytes(id);
          if (vocab->is_eos(id) || bytes == "}" || bytes == "]" || bytes == "\"" || bytes == "0") {
            pick = id;
            break;
          }
        }
      }
      ref.advance(pick);
      engine.advance(pick);
      if (!vocab->is_eos(pick)) out.append(vocab->bytes(pick));
    }
    finished += ref.finished() ? 1 : 0;
  }
  EXPECT_GT(finished, 12);
  EXPECT_GT(compared, 1000u);
}
