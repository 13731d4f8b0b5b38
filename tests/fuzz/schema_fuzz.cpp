// libFuzzer target for the JSON Schema compiler and the constraint matcher:
// the input is a JSON Schema text, compiled strict (and, when it parses as
// JSON, lenient too) against a small synthetic vocabulary (fuzz_vocab.hpp).
// Only nextok::Error may escape compiling. A compiled grammar is then walked
// for up to 20 tokens twice (lowest allowed id; a seeded random allowed id),
// checking the mask at every step (every token at steps 0, 5, 10, ...; a
// sample in between) against advance():
//   - the mask is exact: a set bit is accepted by advance() and
//     accepts_bytes(), a clear bit refused by accepts_bytes() and (a sample)
//     by advance() with Error{kInvalidArgument}, leaving the state as it was;
//   - EOS is set iff is_complete(); other special tokens and the padding
//     bits past the vocabulary are never set;
//   - a state reached by allowed tokens is never a dead end;
//   - clone(), rollback() and reset() reproduce the masks seen before.
// Build with -DNEXTOK_FUZZ=ON and clang (see tests/fuzz/CMakeLists.txt);
// run: schema_fuzz -dict=tests/fuzz/json_schema.dict tests/fuzz/corpus/schema
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
using nextok_fuzz::Rng;

std::string g_text;  // the bytes of the tokens taken so far, for messages

[[noreturn]] void fail(const char* what, uint32_t token, size_t step) {
  const bool skip = nextok_fuzz::skipped(what);
  if (skip && !nextok_fuzz::log_skipped()) throw nextok_fuzz::Skipped{};
  std::fprintf(stderr, "schema_fuzz: %s (token %u, step %zu)\ntext so far: ", what, token, step);
  nextok_fuzz::print_escaped(stderr, g_text);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  if (skip) throw nextok_fuzz::Skipped{};
  __builtin_trap();
}

struct Checker {
  const nextok::Vocabulary& vocab;
  size_t words;

  // Whether advance(t) is accepted here; the state is left as it was.
  bool try_advance(JsonConstraint& c, uint32_t t, size_t step) const {
    const size_t before = c.steps();
    try {
      c.advance(t);
    } catch (const nextok::Error& e) {
      if (e.code() != nextok::ErrorCode::kInvalidArgument) fail("advance: wrong error", t, step);
      if (c.steps() != before) fail("advance threw but moved the state", t, step);
      return false;
    }
    if (c.steps() != before + 1) fail("advance did not take one step", t, step);
    c.rollback(1);
    return true;
  }

  // A set bit must advance(); a clear bit must be refused by accepts_bytes()
  // and, when `throw_check`, by advance() with Error{kInvalidArgument}
  // (exceptions are slow, so only a sample of clear bits takes that path).
  void check_token(JsonConstraint& c, std::span<const uint32_t> mask, uint32_t t, size_t step,
                   bool throw_check) const {
    const bool bit = nextok::bitmask_allows(mask, t);
    if (vocab.is_eos(t)) {
      if (bit != (c.finished() || c.is_complete())) fail("EOS bit != is_complete()", t, step);
      if (throw_check && try_advance(c, t, step) != bit) fail("advance(EOS) != EOS bit", t, step);
      return;
    }
    if (vocab.is_special(t) && bit) fail("special token allowed", t, step);
    const std::string_view bytes = vocab.bytes(t);
    const bool plain = !vocab.is_special(t) && !bytes.empty();
    if (plain && c.accepts_bytes(bytes) != bit) {
      fail(bit ? "mask allows a token accepts_bytes() refuses"
               : "accepts_bytes() takes a token the mask clears",
           t, step);
    }
    if (bit || throw_check) {
      const bool ok = try_advance(c, t, step);
      if (bit && !ok) fail("mask allows a token advance() rejects", t, step);
      if (!bit && ok) fail("advance() accepts a token the mask clears", t, step);
    }
  }

  // Checks every token on `full` steps (small vocabularies), else a sample;
  // returns the allowed non-EOS tokens.
  std::vector<uint32_t> check_mask(JsonConstraint& c, std::span<const uint32_t> mask, size_t step,
                                   Rng& rng, bool full) const {
    const size_t v = vocab.size();
    for (size_t i = v; i < words * 32; ++i)
      if (nextok::bitmask_allows(mask, i)) fail("bit set past the vocabulary", 0, step);
    std::vector<uint32_t> allowed;
    for (uint32_t t = 0; t < v; ++t)
      if (nextok::bitmask_allows(mask, t) && !vocab.is_eos(t)) allowed.push_back(t);
    for (uint32_t e : vocab.eos_ids()) check_token(c, mask, e, step, true);
    if (full) {
      for (uint32_t t = 0; t < v; ++t) check_token(c, mask, t, step, false);
    } else {
      for (int k = 0; k < 48; ++k)
        check_token(c, mask, static_cast<uint32_t>(rng.below(v)), step, false);
      for (int k = 0; k < 16 && !allowed.empty(); ++k)
        check_token(c, mask, allowed[rng.below(allowed.size())], step, false);
    }
    for (int k = 0; k < 4; ++k)
      check_token(c, mask, static_cast<uint32_t>(rng.below(v)), step, true);
    if (!allowed.empty() && !c.can_continue()) fail("tokens allowed but !can_continue()", 0, step);
    if (allowed.empty() && !c.finished() && c.can_continue())
      fail("can_continue() but no token allowed", 0, step);
    return allowed;
  }
};

void walk(const std::shared_ptr<const JsonGrammar>& g, bool lowest, uint64_t seed) {
  const auto& index = nextok_fuzz::fuzz_index();
  const nextok::Vocabulary& vocab = index->vocab();
  const size_t words = nextok::bitmask_words(vocab.size());
  const Checker chk{vocab, words};
  const bool small = vocab.size() <= 4096;
  Rng rng{seed};

  JsonConstraint c(g);
  g_text.clear();
  std::vector<std::vector<uint32_t>> masks(1, std::vector<uint32_t>(words, ~0u));
  c.step_mask(masks[0]);
  std::vector<uint32_t> allowed = chk.check_mask(c, masks[0], 0, rng, small);
  const bool start_dead = allowed.empty() && !c.is_complete();
  if (start_dead) return;  // an unsatisfiable schema: nothing to walk

  std::vector<uint32_t> taken;
  for (size_t step = 1; step <= 20 && !c.finished(); ++step) {
    uint32_t t;
    const bool eos_ok = c.is_complete() && !vocab.eos_ids().empty();
    if (allowed.empty() || (eos_ok && rng.below(4) == 0)) {
      if (!eos_ok) fail("dead end: no token allowed and not complete", 0, step);
      t = vocab.eos_ids()[0];
    } else {
      t = lowest ? allowed.front() : allowed[rng.below(allowed.size())];
    }
    try {
      c.advance(t);
    } catch (const nextok::Error&) {
      fail("mask allows a token advance() rejects (taken)", t, step);
    }
    taken.push_back(t);
    g_text += vocab.bytes(t);
    masks.emplace_back(words, ~0u);
    c.step_mask(masks.back());
    for (uint32_t e : vocab.eos_ids())
      if (nextok::bitmask_allows(masks.back(), e) != (c.finished() || c.is_complete()))
        fail("after advance: EOS bit != is_complete()", e, step);
    if (c.finished()) {
      for (size_t w = 0; w < words; ++w) {
        uint32_t expect = 0;
        for (uint32_t e : vocab.eos_ids())
          if (e / 32 == w) expect |= 1u << (e % 32);
        if (masks.back()[w] != expect) fail("after EOS: mask is not EOS alone", 0, step);
      }
      break;
    }
    allowed = chk.check_mask(c, masks.back(), step, rng, small && step % 5 == 0);
    if (allowed.empty() && !c.is_complete()) fail("dead end after allowed tokens", t, step);
  }

  // A clone sees the same mask; rollback and reset give back earlier masks.
  std::vector<uint32_t> m(words);
  const auto copy = c.clone();
  copy->step_mask(m);
  if (m != masks.back()) fail("clone() gives another mask", 0, taken.size());
  if (c.steps() != taken.size()) fail("steps() != tokens taken", 0, taken.size());
  const size_t back = rng.below(taken.size() + 1);
  c.rollback(back);
  c.step_mask(m);
  if (m != masks[taken.size() - back]) fail("rollback() gives another mask", 0, back);
  try {
    c.rollback(c.steps() + 1);
    fail("rollback past the start did not throw", 0, 0);
  } catch (const nextok::Error&) {
  }
  c.reset();
  c.step_mask(m);
  if (m != masks[0]) fail("reset() gives another mask", 0, 0);
  copy->reset();
  copy->step_mask(m);
  if (m != masks[0]) fail("reset() of a clone gives another mask", 0, 0);
}

void run(std::string_view schema, const nextok::JsonConstraintOptions& opt, uint64_t seed) {
  std::shared_ptr<const JsonGrammar> g;
  try {
    g = JsonGrammar::from_schema(nextok_fuzz::fuzz_index(), schema, opt);
  } catch (const nextok::Error&) {
    return;
  }
  walk(g, true, seed);
  walk(g, false, seed ^ 0x5bd1e995u);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)nextok_fuzz::fuzz_index();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view schema(reinterpret_cast<const char*>(data), size);
  const uint64_t seed = nextok_fuzz::fnv1a(schema);
  static const uint8_t kWhitespace[] = {20, 0, 1, 3};
  nextok::JsonConstraintOptions opt;
  opt.max_whitespace = kWhitespace[seed % 4];
  try {
    run(schema, opt, seed);
  } catch (const nextok_fuzz::Skipped&) {
  }
  if (nlohmann::json::accept(schema)) {
    opt.strict = false;
    try {
      run(schema, opt, seed >> 8);
    } catch (const nextok_fuzz::Skipped&) {
    }
  }
  return 0;
}
