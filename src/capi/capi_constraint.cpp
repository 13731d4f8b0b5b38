// C API: grammar handles (JSON Schema / any-object compilation) and matcher
// handles (masks, accept, rollback, state queries).
#include <cstring>
#include <string>

#include "capi/capi_internal.hpp"
#include "nextok/mask.hpp"

using nextok::Error;
using nextok::ErrorCode;
using nextok::capi::guarded;
using nextok::capi::require;

namespace {

constexpr size_t kOptionsV1Size = sizeof(nextok_grammar_options);

nextok::JsonConstraintOptions options_of(const nextok_grammar_options* opt) {
  nextok::JsonConstraintOptions o;
  if (opt == nullptr) return o;
  if (opt->struct_size < kOptionsV1Size) {
    throw Error(ErrorCode::kInvalidArgument, "struct_size",
                "nextok_grammar_options.struct_size is " + std::to_string(opt->struct_size) +
                    "; call nextok_grammar_options_default first");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(opt);
  for (size_t i = sizeof(nextok_grammar_options); i < opt->struct_size; ++i) {
    if (bytes[i] != 0) {
      throw Error(ErrorCode::kUnsupported, "struct_size",
                  "nextok_grammar_options sets fields this library version does not know");
    }
  }
  o.strict = opt->strict;
  o.max_whitespace = opt->max_whitespace;
  o.limits.max_schema_bytes = opt->max_schema_bytes;
  o.limits.max_grammar_nodes = opt->max_grammar_nodes;
  o.limits.max_dfa_states = opt->max_dfa_states;
  o.limits.max_enum_values = opt->max_enum_values;
  o.limits.max_schema_depth = opt->max_schema_depth;
  o.limits.max_compile_ms = opt->max_compile_ms;
  return o;
}

// The tokenizer's token index, built on first use (thread-safe).
std::shared_ptr<const nextok::TokenIndex> index_of(const nextok_tokenizer* tok) {
  std::call_once(tok->index_once,
                 [&] { tok->index = nextok::TokenIndex::build(tok->tok.shared_vocab()); });
  return tok->index;
}

nextok_status wrap(std::shared_ptr<const nextok::JsonGrammar> g, size_t vocab_size,
                   nextok_grammar** out) {
  auto handle = std::make_unique<nextok_grammar>();
  handle->grammar = std::move(g);
  handle->vocab_size = vocab_size;
  *out = handle.release();
  return NEXTOK_OK;
}

}  // namespace

extern "C" {

void nextok_grammar_options_default(nextok_grammar_options* opt) {
  if (opt == nullptr) return;
  const nextok::JsonConstraintOptions o;
  std::memset(opt, 0, sizeof(*opt));
  opt->struct_size = sizeof(*opt);
  opt->strict = o.strict;
  opt->max_whitespace = o.max_whitespace;
  opt->max_schema_bytes = o.limits.max_schema_bytes;
  opt->max_grammar_nodes = o.limits.max_grammar_nodes;
  opt->max_dfa_states = o.limits.max_dfa_states;
  opt->max_enum_values = o.limits.max_enum_values;
  opt->max_schema_depth = o.limits.max_schema_depth;
  opt->max_compile_ms = o.limits.max_compile_ms;
}

nextok_status nextok_grammar_json_schema(const nextok_tokenizer* tok, const char* schema,
                                         size_t len, const nextok_grammar_options* opt,
                                         nextok_grammar** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    require(tok, "tok");
    require(schema, "schema");
    const auto o = options_of(opt);
    auto g = nextok::JsonGrammar::from_schema(index_of(tok), std::string_view(schema, len), o);
    return wrap(std::move(g), tok->tok.vocab().size(), out);
  });
}

nextok_status nextok_grammar_json_object(const nextok_tokenizer* tok,
                                         const nextok_grammar_options* opt, nextok_grammar** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    require(tok, "tok");
    const auto o = options_of(opt);
    return wrap(nextok::JsonGrammar::any_object(index_of(tok), o), tok->tok.vocab().size(), out);
  });
}

void nextok_grammar_free(nextok_grammar* g) {
  delete g;
}

size_t nextok_grammar_vocab_size(const nextok_grammar* g) {
  return g == nullptr ? 0 : g->vocab_size;
}

size_t nextok_grammar_warning_count(const nextok_grammar* g) {
  return g == nullptr ? 0 : g->grammar->warnings().size();
}

const char* nextok_grammar_warning(const nextok_grammar* g, size_t i) {
  if (g == nullptr || i >= g->grammar->warnings().size()) return nullptr;
  return g->grammar->warnings()[i].c_str();
}

nextok_status nextok_matcher_new(const nextok_grammar* g, nextok_matcher** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    require(g, "g");
    auto m = std::make_unique<nextok_matcher>();
    m->constraint = std::make_unique<nextok::JsonConstraint>(g->grammar);
    m->vocab_size = g->vocab_size;
    *out = m.release();
    return NEXTOK_OK;
  });
}

nextok_status nextok_matcher_clone(const nextok_matcher* m, nextok_matcher** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    require(m, "m");
    auto copy = std::make_unique<nextok_matcher>();
    copy->constraint = std::make_unique<nextok::JsonConstraint>(*m->constraint);
    copy->vocab_size = m->vocab_size;
    *out = copy.release();
    return NEXTOK_OK;
  });
}

void nextok_matcher_free(nextok_matcher* m) {
  delete m;
}

nextok_status nextok_matcher_fill_mask(nextok_matcher* m, uint32_t* mask, size_t words) {
  return guarded([&] {
    require(m, "m");
    require(mask, "mask");
    if (m->constraint->wants_mask()) {
      m->constraint->step_mask(std::span<uint32_t>(mask, words));  // checks words
      return NEXTOK_OK;
    }
    // An open think block: every id of the vocabulary is allowed.
    const size_t need = nextok::bitmask_words(m->vocab_size);
    if (words < need) {
      throw Error(ErrorCode::kMaskSizeMismatch, "mask",
                  "mask has " + std::to_string(words) + " words; the vocabulary needs " +
                      std::to_string(need));
    }
    std::fill(mask, mask + words, 0u);
    std::fill(mask, mask + m->vocab_size / 32, ~0u);
    if (m->vocab_size % 32 != 0) mask[m->vocab_size / 32] = (1u << (m->vocab_size % 32)) - 1u;
    return NEXTOK_OK;
  });
}

nextok_status nextok_matcher_accept_token(nextok_matcher* m, uint32_t token) {
  return guarded([&] {
    require(m, "m");
    if (token >= m->vocab_size) {
      throw Error(ErrorCode::kInvalidArgument, "token",
                  "token " + std::to_string(token) + " is outside the vocabulary (size " +
                      std::to_string(m->vocab_size) + ")");
    }
    m->constraint->advance(token);
    return NEXTOK_OK;
  });
}

nextok_status nextok_matcher_rollback(nextok_matcher* m, size_t n) {
  return guarded([&] {
    require(m, "m");
    m->constraint->rollback(n);
    return NEXTOK_OK;
  });
}

nextok_status nextok_matcher_reset(nextok_matcher* m) {
  return guarded([&] {
    require(m, "m");
    m->constraint->reset();
    return NEXTOK_OK;
  });
}

nextok_status nextok_matcher_set_think_open(nextok_matcher* m, bool open) {
  return guarded([&] {
    require(m, "m");
    m->constraint->set_think_open(open);
    return NEXTOK_OK;
  });
}

bool nextok_matcher_is_accepting(const nextok_matcher* m) {
  return m != nullptr && m->constraint->is_complete();
}

bool nextok_matcher_can_continue(const nextok_matcher* m) {
  if (m == nullptr) return false;
  try {
    return m->constraint->can_continue();
  } catch (...) {
    return false;
  }
}

bool nextok_matcher_is_terminated(const nextok_matcher* m) {
  return m != nullptr && m->constraint->finished();
}

size_t nextok_matcher_steps(const nextok_matcher* m) {
  return m == nullptr ? 0 : m->constraint->steps();
}

}  // extern "C"
