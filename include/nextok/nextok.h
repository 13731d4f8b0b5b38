/* nextok C API: a stable, plain-C boundary over the C++ library.
 *
 * Four opaque handles: a tokenizer (vocabulary, encode, decode), a sampler
 * (one request's sampling state), a grammar (one compiled JSON schema) and
 * a matcher (one request's position in a grammar). Every function that can
 * fail returns a nextok_status; no C++ exception ever crosses this boundary.
 * docs/c-api.md describes ownership, the error model and thread safety.
 *
 * Header requirements: C99 or later (or C++). Link nextok_c (static, with
 * the C++ runtime) or nextok_c_shared (libnextok_c.so, self-contained). */
#ifndef NEXTOK_NEXTOK_H
#define NEXTOK_NEXTOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define NEXTOK_API
#elif defined(__GNUC__)
#define NEXTOK_API __attribute__((visibility("default")))
#else
#define NEXTOK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's signature or a struct's v1 prefix changes. */
#define NEXTOK_ABI_VERSION 1
/* The seed a sampler uses unless the config names another one. */
#define NEXTOK_DEFAULT_SEED 0xA7A7u
/* The largest top_logprobs_k a sampler accepts. */
#define NEXTOK_MAX_TOP_LOGPROBS 20u

/* ---- status codes and errors -------------------------------------------- */

/* 1..9 mirror nextok::ErrorCode one to one; 100+ exist only in the C API. */
typedef enum nextok_status {
  NEXTOK_OK = 0,
  NEXTOK_INVALID_ARGUMENT = 1,   /* a parameter is NULL, out of range or unknown */
  NEXTOK_NAN_LOGITS = 2,         /* a logit is NaN */
  NEXTOK_NON_FINITE_LOGITS = 3,  /* +Inf where a probability must be formed */
  NEXTOK_NO_VIABLE_TOKEN = 4,    /* every token is masked or at -Inf */
  NEXTOK_MASK_SIZE_MISMATCH = 5, /* the bitmask has the wrong number of words */
  NEXTOK_SHAPE_MISMATCH = 6,     /* logits length differs from the sampler's vocab */
  NEXTOK_UNSUPPORTED = 7,        /* a feature this build or this input lacks */
  NEXTOK_IO = 8,                 /* a file could not be read */
  NEXTOK_MALFORMED_FILE = 9,     /* a file's content is invalid or truncated */
  NEXTOK_BUFFER_TOO_SMALL = 100, /* output capacity too small; *n holds the need */
  NEXTOK_OUT_OF_MEMORY = 101,    /* an allocation failed */
  NEXTOK_INTERNAL = 102          /* an unexpected failure inside the library */
} nextok_status;

/* The message of the last call on this thread that returned a status other
 * than NEXTOK_OK; "" after a call that returned NEXTOK_OK. Never NULL. The
 * pointer stays valid until the next nextok call on the same thread. */
NEXTOK_API const char* nextok_last_error(void);
/* The offending parameter of that failure ("top_p", "mask", a JSON
 * pointer into the schema, …); "" when none applies. Never NULL. */
NEXTOK_API const char* nextok_last_error_param(void);
/* A static name for a status ("invalid_argument"); "unknown" otherwise. */
NEXTOK_API const char* nextok_status_name(nextok_status status);

/* The library version ("0.1.0") and NEXTOK_ABI_VERSION of the built library. */
NEXTOK_API const char* nextok_version(void);
NEXTOK_API uint32_t nextok_abi_version(void);

/* ---- token bitmask --------------------------------------------------------
 * uint32_t words, ceil(V / 32) of them; bit (i % 32) of word (i / 32) set
 * means token i is allowed. The XGrammar / llguidance layout. */
NEXTOK_API size_t nextok_bitmask_words(size_t vocab_size);

/* ---- size-query convention ------------------------------------------------
 * Functions with (out, cap, n) write at most cap items and always set *n to
 * the number the full result needs. out may be NULL when cap is 0 (a size
 * query, returning NEXTOK_OK). When cap is too small nothing is written and
 * NEXTOK_BUFFER_TOO_SMALL is returned. */

/* ---- tokenizer --------------------------------------------------------------
 * Immutable after loading: every function may be called from any number of
 * threads at once. */
typedef struct nextok_tokenizer nextok_tokenizer;

/* path: a directory holding tokenizer.json (plus optional configs), a
 * tokenizer.json file, or a .gguf file. NUL-terminated, UTF-8. */
NEXTOK_API nextok_status nextok_tokenizer_load(const char* path, nextok_tokenizer** out);
NEXTOK_API void nextok_tokenizer_free(nextok_tokenizer* tok); /* NULL is a no-op */

/* Number of token ids (one more than the largest id); 0 for a NULL handle. */
NEXTOK_API size_t nextok_tokenizer_vocab_size(const nextok_tokenizer* tok);
/* The first (smallest) end-of-sequence id. NEXTOK_UNSUPPORTED when the
 * tokenizer names none. */
NEXTOK_API nextok_status nextok_tokenizer_eos_token(const nextok_tokenizer* tok, uint32_t* out);
/* Every end-of-sequence id, ascending (size-query convention). */
NEXTOK_API nextok_status nextok_tokenizer_eos_tokens(const nextok_tokenizer* tok, uint32_t* out,
                                                     size_t cap, size_t* n);
/* true when id ends a sequence; false for a NULL handle. */
NEXTOK_API bool nextok_tokenizer_is_eos(const nextok_tokenizer* tok, uint32_t id);
/* The raw bytes one token decodes to (size-query convention; not
 * NUL-terminated). An id >= vocab size is NEXTOK_INVALID_ARGUMENT. */
NEXTOK_API nextok_status nextok_tokenizer_token_bytes(const nextok_tokenizer* tok, uint32_t id,
                                                      char* out, size_t cap, size_t* n);
/* Text (len bytes, need not be NUL-terminated) → token ids, as HF tokenizers'
 * encode(text, add_special_tokens=False). parse_special: recognise special
 * tokens written in the text (false for untrusted text). Size-query
 * convention. A GGUF tokenizer whose encoder is not supported gives
 * NEXTOK_UNSUPPORTED (its vocabulary still works). */
NEXTOK_API nextok_status nextok_tokenize(const nextok_tokenizer* tok, const char* text, size_t len,
                                         bool parse_special, uint32_t* out, size_t cap, size_t* n);
/* Token ids → the concatenated bytes (size-query convention; not
 * NUL-terminated; may end inside a UTF-8 character). skip_special drops
 * special tokens. Ids >= vocab size are NEXTOK_INVALID_ARGUMENT. */
NEXTOK_API nextok_status nextok_detokenize(const nextok_tokenizer* tok, const uint32_t* ids,
                                           size_t n_ids, bool skip_special, char* out, size_t cap,
                                           size_t* n);

/* ---- sampler ----------------------------------------------------------------
 * One request's state: configs, random stream, penalty window, scratch
 * memory. Use one handle from one thread at a time. */
typedef struct nextok_sampler nextok_sampler;

typedef enum nextok_filter_order {
  NEXTOK_FILTER_ORDER_SPEC = 0,       /* temperature + softmax, then top-p, min-p, top-k */
  NEXTOK_FILTER_ORDER_MLX_LM = 1,     /* filters at temperature 1, temperature at the draw */
  NEXTOK_FILTER_ORDER_TOP_K_FIRST = 2 /* top-k, then top-p, then min-p (vLLM order) */
} nextok_filter_order;

typedef struct nextok_sampler_config {
  /* sizeof(nextok_sampler_config) as the caller compiled it; set by
   * nextok_sampler_config_default. Lets the struct grow compatibly. */
  size_t struct_size;
  float temperature;    /* < 1e-5 (0 included) is greedy */
  float top_p;          /* active when 0 < top_p < 1 */
  int32_t top_k;        /* active when 0 < top_k < V */
  float min_p;          /* active when > 0 */
  uint64_t seed;        /* NEXTOK_DEFAULT_SEED unless set */
  uint32_t top_logprobs_k; /* 0..NEXTOK_MAX_TOP_LOGPROBS; 0 = no logprob work */
  int32_t filter_order; /* a nextok_filter_order */
  float repetition_penalty; /* > 0; 1 = off */
  float presence_penalty;   /* 0 = off */
  float frequency_penalty;  /* 0 = off */
  uint32_t penalty_window;  /* trailing tokens the penalties look at */
  /* Additive logit bias: logit_bias_count pairs, copied by sampler_new.
   * -INFINITY bans a token. Both pointers may be NULL when the count is 0. */
  const int32_t* logit_bias_tokens;
  const float* logit_bias_values;
  size_t logit_bias_count;
} nextok_sampler_config;

/* Fills every field with the library defaults (greedy, no penalties). */
NEXTOK_API void nextok_sampler_config_default(nextok_sampler_config* cfg);

/* vocab_size: the logits width every sample call must pass, or 0 to accept
 * any width. Invalid configs give NEXTOK_INVALID_ARGUMENT naming the field. */
NEXTOK_API nextok_status nextok_sampler_new(const nextok_sampler_config* cfg, size_t vocab_size,
                                            nextok_sampler** out);
NEXTOK_API void nextok_sampler_free(nextok_sampler* s); /* NULL is a no-op */

/* Chooses the next token from one float32 logits row of n entries and
 * records it in the penalty window. mask: NULL (unconstrained) or exactly
 * nextok_bitmask_words(n) words. */
NEXTOK_API nextok_status nextok_sampler_sample(nextok_sampler* s, const float* logits, size_t n,
                                               const uint32_t* mask, size_t mask_words,
                                               uint32_t* token_out);

typedef struct nextok_token_logprob {
  int32_t token;
  float logprob;
} nextok_token_logprob;

/* As nextok_sampler_sample, plus OpenAI-style logprobs from the raw logits:
 * the chosen token's logprob and the config's top_logprobs_k most likely
 * tokens, descending (ties by lower id). top_cap must be at least
 * top_logprobs_k; *top_n receives the count written. With top_logprobs_k
 * == 0 this is NEXTOK_INVALID_ARGUMENT. */
NEXTOK_API nextok_status nextok_sampler_sample_logprobs(nextok_sampler* s, const float* logits,
                                                        size_t n, const uint32_t* mask,
                                                        size_t mask_words, uint32_t* token_out,
                                                        float* token_logprob,
                                                        nextok_token_logprob* top, size_t top_cap,
                                                        size_t* top_n);

/* Records a token chosen elsewhere (prompt or forced token) in the penalty
 * window. A token >= the sampler's vocab_size is NEXTOK_INVALID_ARGUMENT. */
NEXTOK_API nextok_status nextok_sampler_accept(nextok_sampler* s, uint32_t token);
/* Back to the state right after nextok_sampler_new: empty penalty window,
 * the random stream reseeded from the config's seed. */
NEXTOK_API nextok_status nextok_sampler_reset(nextok_sampler* s);

/* ---- grammar ----------------------------------------------------------------
 * A compiled JSON schema for one tokenizer's vocabulary. Immutable: share one
 * handle across threads and matchers freely. It keeps what it needs of the
 * tokenizer alive, so the tokenizer may be freed first. */
typedef struct nextok_grammar nextok_grammar;

typedef struct nextok_grammar_options {
  size_t struct_size; /* set by nextok_grammar_options_default */
  /* true: a keyword that constrains but is not enforced fails compilation
   * (NEXTOK_UNSUPPORTED naming its JSON pointer); false: it is ignored and
   * listed among the grammar's warnings. */
  bool strict;
  uint8_t max_whitespace;   /* longest whitespace run between JSON tokens; 0 = compact */
  size_t max_schema_bytes;  /* compile limits: past one, NEXTOK_INVALID_ARGUMENT */
  size_t max_grammar_nodes;
  size_t max_dfa_states;
  size_t max_enum_values;
  size_t max_schema_depth;
  uint32_t max_compile_ms;  /* wall clock; 0 = no limit */
} nextok_grammar_options;

NEXTOK_API void nextok_grammar_options_default(nextok_grammar_options* opt);

/* schema: len bytes of JSON Schema text. opt may be NULL (defaults). The
 * first compile on a tokenizer also builds its token index (once; later
 * grammars reuse it). Malformed JSON or schemas: NEXTOK_INVALID_ARGUMENT
 * with the JSON pointer in nextok_last_error_param(). */
NEXTOK_API nextok_status nextok_grammar_json_schema(const nextok_tokenizer* tok,
                                                    const char* schema, size_t len,
                                                    const nextok_grammar_options* opt,
                                                    nextok_grammar** out);
/* Any JSON object (OpenAI response_format json_object). */
NEXTOK_API nextok_status nextok_grammar_json_object(const nextok_tokenizer* tok,
                                                    const nextok_grammar_options* opt,
                                                    nextok_grammar** out);
NEXTOK_API void nextok_grammar_free(nextok_grammar* g); /* NULL is a no-op */
/* Vocabulary size the grammar was compiled for; 0 for a NULL handle. */
NEXTOK_API size_t nextok_grammar_vocab_size(const nextok_grammar* g);
/* Lenient-mode warnings: the count, and warning i (NUL-terminated, valid
 * while g lives; NULL when i is out of range or g is NULL). */
NEXTOK_API size_t nextok_grammar_warning_count(const nextok_grammar* g);
NEXTOK_API const char* nextok_grammar_warning(const nextok_grammar* g, size_t i);

/* ---- matcher ----------------------------------------------------------------
 * One request's position in a grammar. Use one handle from one thread at a
 * time; clones are independent. It keeps its grammar alive. */
typedef struct nextok_matcher nextok_matcher;

NEXTOK_API nextok_status nextok_matcher_new(const nextok_grammar* g, nextok_matcher** out);
NEXTOK_API nextok_status nextok_matcher_clone(const nextok_matcher* m, nextok_matcher** out);
NEXTOK_API void nextok_matcher_free(nextok_matcher* m); /* NULL is a no-op */

/* Writes the tokens allowed next. words must be at least
 * nextok_bitmask_words(grammar vocab size); pass nextok_bitmask_words(n
 * logits) when the logits row is wider than the vocabulary: the extra words
 * are cleared. EOS ids are allowed exactly when the value is complete. After
 * EOS was accepted only the EOS ids are set. */
NEXTOK_API nextok_status nextok_matcher_fill_mask(nextok_matcher* m, uint32_t* mask, size_t words);
/* Moves on by one token. A token the grammar does not allow here (an id
 * outside the vocabulary included) is NEXTOK_INVALID_ARGUMENT and leaves
 * the state unchanged. */
NEXTOK_API nextok_status nextok_matcher_accept_token(nextok_matcher* m, uint32_t token);
/* Undoes the last n accepted tokens; n > steps taken is NEXTOK_INVALID_ARGUMENT. */
NEXTOK_API nextok_status nextok_matcher_rollback(nextok_matcher* m, size_t n);
NEXTOK_API nextok_status nextok_matcher_reset(nextok_matcher* m);
/* While a think block is open (reasoning models) the output is not
 * constrained: fill_mask allows every token of the vocabulary, and
 * accept_token leaves the grammar position unchanged (the step still counts
 * for rollback). Close it when the block ends. */
NEXTOK_API nextok_status nextok_matcher_set_think_open(nextok_matcher* m, bool open);
/* The output so far is a complete value (EOS is allowed now). */
NEXTOK_API bool nextok_matcher_is_accepting(const nextok_matcher* m);
/* Some non-EOS token may still follow. */
NEXTOK_API bool nextok_matcher_can_continue(const nextok_matcher* m);
/* EOS has been accepted: generation is over. */
NEXTOK_API bool nextok_matcher_is_terminated(const nextok_matcher* m);
/* Tokens accepted since creation or reset. */
NEXTOK_API size_t nextok_matcher_steps(const nextok_matcher* m);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NEXTOK_NEXTOK_H */
