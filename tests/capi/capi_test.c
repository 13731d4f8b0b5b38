/* The C API from C: a real tokenizer, a JSON schema, a constrained sampling
 * loop on random logits, the decoded text checked against the schema, and
 * the error paths. Usage: nextok_capi_test <tokenizer dir or file>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextok/nextok.h"

static int failures = 0;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: \"%s\")\n", __FILE__,      \
              __LINE__, #cond, nextok_last_error());                                   \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)

#define REQUIRE(cond)                                                                  \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s (last error: \"%s\")\n", __FILE__,    \
              __LINE__, #cond, nextok_last_error());                                   \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* A failed call: the expected status and a non-empty message. */
#define CHECK_FAILS(call, status)                                                      \
  do {                                                                                 \
    nextok_status got_ = (call);                                                       \
    if (got_ != (status) || nextok_last_error()[0] == '\0') {                          \
      fprintf(stderr, "%s:%d: %s gave %s (\"%s\"), expected %s with a message\n",      \
              __FILE__, __LINE__, #call, nextok_status_name(got_), nextok_last_error(), \
              nextok_status_name(status));                                             \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)

static const char kSchema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"a\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":999},"
    "\"b\":{\"type\":\"boolean\"}},"
    "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}";

/* xorshift64*: the test's own logits generator. */
static uint64_t rng_state;
static float next_uniform(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (float)((rng_state * 0x2545F4914F6CDD1DULL) >> 40) / 16777216.0f;
}

/* ---- a minimal checker for the schema above -------------------------------- */

static void skip_ws(const char** p) {
  while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') ++*p;
}

/* A JSON string of ASCII content (escapes included) into out; 0 on error. */
static int parse_string(const char** p, char* out, size_t cap) {
  size_t n = 0;
  if (**p != '"') return 0;
  ++*p;
  while (**p != '"') {
    char c = **p;
    if (c == '\0' || (unsigned char)c < 0x20 || n + 1 >= cap) return 0;
    if (c == '\\') {
      ++*p;
      switch (**p) {
        case '"': case '\\': case '/': c = **p; break;
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          unsigned v = 0;
          int i;
          for (i = 1; i <= 4; ++i) {
            const char h = (*p)[i];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
            else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
            else return 0;
          }
          if (v >= 0x80) return 0;
          c = (char)v;
          *p += 4;
          break;
        }
        default: return 0;
      }
    }
    out[n++] = c;
    ++*p;
  }
  ++*p;
  out[n] = '\0';
  return 1;
}

/* The schema: an object with exactly "a" (integer 0..999) and "b" (bool). */
static int valid_instance(const char* text) {
  const char* p = text;
  int seen_a = 0, seen_b = 0;
  skip_ws(&p);
  if (*p++ != '{') return 0;
  for (;;) {
    char key[16];
    skip_ws(&p);
    if (!parse_string(&p, key, sizeof key)) return 0;
    skip_ws(&p);
    if (*p++ != ':') return 0;
    skip_ws(&p);
    if (strcmp(key, "a") == 0 && !seen_a) {
      long v = 0;
      int digits = 0, negative = 0;
      if (*p == '-') negative = 1, ++p; /* -0 is 0; any other negative is out of range */
      if (*p == '0' && p[1] >= '0' && p[1] <= '9') return 0; /* leading zero */
      while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (++digits > 6) return 0;
      }
      if (digits == 0 || v > 999 || (negative && v != 0)) return 0;
      if (*p == '.' || *p == 'e' || *p == 'E') return 0; /* nextok writes integers plainly */
      seen_a = 1;
    } else if (strcmp(key, "b") == 0 && !seen_b) {
      if (strncmp(p, "true", 4) == 0) p += 4;
      else if (strncmp(p, "false", 5) == 0) p += 5;
      else return 0;
      seen_b = 1;
    } else {
      return 0;
    }
    skip_ws(&p);
    if (*p == ',') { ++p; continue; }
    if (*p++ != '}') return 0;
    break;
  }
  skip_ws(&p);
  return *p == '\0' && seen_a && seen_b;
}

/* ---- the constrained loop ------------------------------------------------- */

enum { kMaxSteps = 600 };

/* Samples to EOS under the matcher; returns the token count (EOS excluded). */
static size_t generate(nextok_matcher* m, nextok_sampler* s, const nextok_tokenizer* tok,
                       uint64_t logits_seed, uint32_t* out) {
  const size_t vocab = nextok_tokenizer_vocab_size(tok);
  const size_t words = nextok_bitmask_words(vocab);
  uint32_t* mask = calloc(words, sizeof *mask);
  float* logits = malloc(vocab * sizeof *logits);
  size_t n = 0, step, i;
  REQUIRE(mask != NULL && logits != NULL);
  rng_state = logits_seed;
  for (step = 0; step < kMaxSteps; ++step) {
    uint32_t token = 0;
    REQUIRE(nextok_matcher_fill_mask(m, mask, words) == NEXTOK_OK);
    for (i = 0; i < vocab; ++i) logits[i] = 8.0f * next_uniform();
    REQUIRE(nextok_sampler_sample(s, logits, vocab, mask, words, &token) == NEXTOK_OK);
    CHECK(strcmp(nextok_last_error(), "") == 0);
    CHECK(token < vocab && ((mask[token / 32] >> (token % 32)) & 1u));
    REQUIRE(nextok_matcher_accept_token(m, token) == NEXTOK_OK);
    if (nextok_tokenizer_is_eos(tok, token)) break;
    out[n++] = token;
  }
  CHECK(step < kMaxSteps);
  CHECK(nextok_matcher_is_terminated(m));
  free(mask);
  free(logits);
  return n;
}

static char* decode_all(const nextok_tokenizer* tok, const uint32_t* ids, size_t n) {
  size_t need = 0, got = 0;
  char* text;
  REQUIRE(nextok_detokenize(tok, ids, n, false, NULL, 0, &need) == NEXTOK_OK);
  text = malloc(need + 1);
  REQUIRE(text != NULL);
  REQUIRE(nextok_detokenize(tok, ids, n, false, text, need, &got) == NEXTOK_OK);
  CHECK(got == need);
  text[got] = '\0';
  return text;
}

static void test_constrained_loop(const nextok_tokenizer* tok) {
  nextok_grammar* g = NULL;
  nextok_matcher *m = NULL, *m2 = NULL, *clone = NULL;
  nextok_sampler* s = NULL;
  nextok_sampler_config cfg;
  static uint32_t ids[kMaxSteps], ids2[kMaxSteps], enc[4 * kMaxSteps];
  size_t n, n2, n_enc = 0, i;
  char* text;
  const size_t vocab = nextok_tokenizer_vocab_size(tok);

  REQUIRE(nextok_grammar_json_schema(tok, kSchema, strlen(kSchema), NULL, &g) == NEXTOK_OK);
  CHECK(nextok_grammar_vocab_size(g) == vocab);
  REQUIRE(nextok_matcher_new(g, &m) == NEXTOK_OK);
  nextok_grammar_free(g); /* the matcher keeps the grammar alive */

  nextok_sampler_config_default(&cfg);
  cfg.temperature = 1.0f;
  cfg.top_p = 0.95f;
  cfg.seed = 1234;
  REQUIRE(nextok_sampler_new(&cfg, vocab, &s) == NEXTOK_OK);

  REQUIRE(nextok_matcher_clone(m, &clone) == NEXTOK_OK);
  n = generate(m, s, tok, 42, ids);
  text = decode_all(tok, ids, n);
  printf("generated %zu tokens: %s\n", n, text);
  CHECK(n > 0);
  CHECK(valid_instance(text));
  CHECK(nextok_matcher_steps(m) == n + 1);

  /* Same seeds, a fresh sampler state and the untouched clone: same tokens. */
  REQUIRE(nextok_sampler_reset(s) == NEXTOK_OK);
  n2 = generate(clone, s, tok, 42, ids2);
  CHECK(n2 == n && memcmp(ids, ids2, n * sizeof ids[0]) == 0);

  /* Rollback past EOS and one token, then take the same path again. */
  REQUIRE(nextok_matcher_rollback(m, 2) == NEXTOK_OK);
  CHECK(!nextok_matcher_is_terminated(m));
  CHECK(nextok_matcher_steps(m) == n - 1);
  CHECK(nextok_matcher_accept_token(m, ids[n - 1]) == NEXTOK_OK);
  CHECK(nextok_matcher_is_accepting(m));

  /* The text re-encoded by the tokenizer is accepted by a fresh matcher. */
  REQUIRE(nextok_tokenize(tok, text, strlen(text), false, enc, sizeof enc / sizeof enc[0],
                          &n_enc) == NEXTOK_OK);
  CHECK(n_enc > 0);
  CHECK_FAILS(nextok_matcher_new(NULL, &m2), NEXTOK_INVALID_ARGUMENT);
  CHECK(m2 == NULL);
  REQUIRE(nextok_matcher_reset(m) == NEXTOK_OK);
  CHECK(nextok_matcher_steps(m) == 0);
  for (i = 0; i < n_enc; ++i) CHECK(nextok_matcher_accept_token(m, enc[i]) == NEXTOK_OK);
  CHECK(nextok_matcher_is_accepting(m));

  free(text);
  nextok_matcher_free(clone);
  nextok_matcher_free(m);
  nextok_sampler_free(s);
}

static void test_json_object_and_tokenizer(const nextok_tokenizer* tok) {
  nextok_grammar* g = NULL;
  nextok_matcher* m = NULL;
  const size_t vocab = nextok_tokenizer_vocab_size(tok);
  const size_t words = nextok_bitmask_words(vocab);
  uint32_t* mask = calloc(words, sizeof *mask);
  uint32_t brace = 0, bracket = 0, eos = 0;
  size_t n = 0;
  char bytes[8];

  REQUIRE(mask != NULL);
  REQUIRE(nextok_tokenize(tok, "{", 1, false, &brace, 1, &n) == NEXTOK_OK && n == 1);
  REQUIRE(nextok_tokenize(tok, "[", 1, false, &bracket, 1, &n) == NEXTOK_OK && n == 1);
  REQUIRE(nextok_tokenizer_token_bytes(tok, brace, bytes, sizeof bytes, &n) == NEXTOK_OK);
  CHECK(n == 1 && bytes[0] == '{');
  REQUIRE(nextok_tokenizer_eos_token(tok, &eos) == NEXTOK_OK);
  CHECK(nextok_tokenizer_is_eos(tok, eos));
  REQUIRE(nextok_tokenizer_eos_tokens(tok, NULL, 0, &n) == NEXTOK_OK);
  CHECK(n >= 1);

  REQUIRE(nextok_grammar_json_object(tok, NULL, &g) == NEXTOK_OK);
  REQUIRE(nextok_matcher_new(g, &m) == NEXTOK_OK);
  REQUIRE(nextok_matcher_fill_mask(m, mask, words) == NEXTOK_OK);
  CHECK((mask[brace / 32] >> (brace % 32)) & 1u);
  CHECK(!((mask[bracket / 32] >> (bracket % 32)) & 1u));
  CHECK(!((mask[eos / 32] >> (eos % 32)) & 1u));
  /* A disallowed token fails and leaves the state as it was. */
  CHECK_FAILS(nextok_matcher_accept_token(m, bracket), NEXTOK_INVALID_ARGUMENT);
  CHECK(nextok_matcher_steps(m) == 0);
  CHECK_FAILS(nextok_matcher_accept_token(m, eos), NEXTOK_INVALID_ARGUMENT);
  CHECK(nextok_matcher_accept_token(m, brace) == NEXTOK_OK);
  CHECK(nextok_matcher_can_continue(m));
  CHECK(!nextok_matcher_is_accepting(m));
  nextok_matcher_free(m);
  nextok_grammar_free(g);
  free(mask);
}

static void test_logprobs(void) {
  nextok_sampler_config cfg;
  nextok_sampler* s = NULL;
  float logits[100];
  nextok_token_logprob top[NEXTOK_MAX_TOP_LOGPROBS];
  size_t top_n = 0, i;
  uint32_t token = 0;
  float lp = 1.0f;
  for (i = 0; i < 100; ++i) logits[i] = (float)((i * 37) % 100) / 10.0f; /* the max is at i = 27 */
  nextok_sampler_config_default(&cfg);
  cfg.top_logprobs_k = 3;
  REQUIRE(nextok_sampler_new(&cfg, 100, &s) == NEXTOK_OK);
  REQUIRE(nextok_sampler_sample_logprobs(s, logits, 100, NULL, 0, &token, &lp, top, 3, &top_n) ==
          NEXTOK_OK);
  CHECK(token == 27);
  CHECK(top_n == 3 && top[0].token == 27);
  CHECK(lp < 0.0f && fabsf(lp - top[0].logprob) < 1e-6f);
  CHECK(top[0].logprob >= top[1].logprob && top[1].logprob >= top[2].logprob);
  CHECK_FAILS(nextok_sampler_sample_logprobs(s, logits, 100, NULL, 0, &token, &lp, top, 2, &top_n),
              NEXTOK_INVALID_ARGUMENT);
  nextok_sampler_free(s);
}

static void test_errors(const nextok_tokenizer* tok) {
  nextok_tokenizer* missing = (nextok_tokenizer*)&failures; /* must be reset to NULL */
  nextok_grammar* g = (nextok_grammar*)&failures;
  nextok_matcher* m = NULL;
  nextok_sampler* s = NULL;
  nextok_sampler_config cfg;
  const size_t vocab = nextok_tokenizer_vocab_size(tok);
  const size_t words = nextok_bitmask_words(vocab);
  uint32_t* mask = calloc(words + 1, sizeof *mask);
  float* logits = calloc(vocab, sizeof *logits);
  uint32_t token = 0, one = 0;
  size_t n = 0;
  char small[1];
  static const char kBadJson[] = "{\"type\":";
  REQUIRE(mask != NULL && logits != NULL);

  /* NULL handles and outputs. */
  CHECK_FAILS(nextok_matcher_fill_mask(NULL, mask, words), NEXTOK_INVALID_ARGUMENT);
  CHECK(strcmp(nextok_last_error_param(), "m") == 0);
  CHECK_FAILS(nextok_sampler_sample(NULL, logits, vocab, NULL, 0, &token), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_tokenize(NULL, "x", 1, false, &token, 1, &n), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_tokenizer_load(NULL, &missing), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_grammar_json_schema(tok, kSchema, strlen(kSchema), NULL, NULL),
              NEXTOK_INVALID_ARGUMENT);
  CHECK(nextok_tokenizer_vocab_size(NULL) == 0 && !nextok_matcher_is_terminated(NULL));
  nextok_matcher_free(NULL);
  nextok_sampler_free(NULL);
  nextok_grammar_free(NULL);
  nextok_tokenizer_free(NULL);

  /* A missing file. */
  missing = (nextok_tokenizer*)&failures;
  CHECK(nextok_tokenizer_load("/nonexistent/nextok/tokenizer.json", &missing) != NEXTOK_OK);
  CHECK(missing == NULL && nextok_last_error()[0] != '\0');

  /* Bad schema JSON: a code, a message, no handle. */
  CHECK_FAILS(nextok_grammar_json_schema(tok, kBadJson, strlen(kBadJson), NULL, &g),
              NEXTOK_INVALID_ARGUMENT);
  CHECK(g == NULL);
  /* A schema that is JSON but not a schema. */
  CHECK_FAILS(nextok_grammar_json_schema(tok, "{\"type\":\"nope\"}", 15, NULL, &g),
              NEXTOK_INVALID_ARGUMENT);
  {
    nextok_grammar_options opt;
    nextok_grammar_options_default(&opt);
    opt.struct_size = 3;
    CHECK_FAILS(nextok_grammar_json_object(tok, &opt, &g), NEXTOK_INVALID_ARGUMENT);
  }

  /* Tokens outside the vocabulary, masks of the wrong size. */
  REQUIRE(nextok_grammar_json_object(tok, NULL, &g) == NEXTOK_OK);
  CHECK(strcmp(nextok_last_error(), "") == 0); /* success clears the message */
  REQUIRE(nextok_matcher_new(g, &m) == NEXTOK_OK);
  CHECK_FAILS(nextok_matcher_accept_token(m, (uint32_t)vocab + 7), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_matcher_fill_mask(m, mask, words - 1), NEXTOK_MASK_SIZE_MISMATCH);
  CHECK(nextok_matcher_fill_mask(m, mask, words + 1) == NEXTOK_OK); /* wider logits: ok */
  CHECK(mask[words] == 0);
  CHECK_FAILS(nextok_matcher_fill_mask(m, NULL, words), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_matcher_rollback(m, 1), NEXTOK_INVALID_ARGUMENT);
  /* An open think block: everything in the vocabulary, nothing recorded. */
  CHECK(nextok_matcher_set_think_open(m, true) == NEXTOK_OK);
  CHECK(nextok_matcher_fill_mask(m, mask, words + 1) == NEXTOK_OK);
  CHECK(mask[0] == 0xFFFFFFFFu && mask[words] == 0);
  CHECK(((mask[(vocab - 1) / 32] >> ((vocab - 1) % 32)) & 1u) == 1u);
  CHECK(nextok_matcher_accept_token(m, 0) == NEXTOK_OK);
  CHECK(nextok_matcher_set_think_open(m, false) == NEXTOK_OK);
  CHECK(nextok_matcher_fill_mask(m, mask, words) == NEXTOK_OK);
  CHECK(mask[0] != 0xFFFFFFFFu);
  CHECK(nextok_matcher_rollback(m, 1) == NEXTOK_OK);
  CHECK_FAILS(nextok_matcher_set_think_open(NULL, true), NEXTOK_INVALID_ARGUMENT);
  CHECK_FAILS(nextok_tokenizer_token_bytes(tok, (uint32_t)vocab, small, 1, &n),
              NEXTOK_INVALID_ARGUMENT);
  CHECK(nextok_detokenize(tok, &one, 1, false, NULL, 0, &n) == NEXTOK_OK); /* size query */
  one = (uint32_t)vocab;
  CHECK_FAILS(nextok_detokenize(tok, &one, 1, false, NULL, 0, &n), NEXTOK_INVALID_ARGUMENT);

  nextok_sampler_config_default(&cfg);
  REQUIRE(nextok_sampler_new(&cfg, vocab, &s) == NEXTOK_OK);
  CHECK_FAILS(nextok_sampler_accept(s, (uint32_t)vocab), NEXTOK_INVALID_ARGUMENT);
  CHECK(nextok_sampler_accept(s, 0) == NEXTOK_OK);
  CHECK_FAILS(nextok_sampler_sample(s, logits, vocab, mask, words + 1, &token),
              NEXTOK_MASK_SIZE_MISMATCH);
  CHECK_FAILS(nextok_sampler_sample(s, logits, vocab - 1, NULL, 0, &token), NEXTOK_SHAPE_MISMATCH);
  CHECK_FAILS(nextok_sampler_sample(s, NULL, vocab, NULL, 0, &token), NEXTOK_INVALID_ARGUMENT);
  memset(mask, 0, (words + 1) * sizeof *mask);
  CHECK_FAILS(nextok_sampler_sample(s, logits, vocab, mask, words, &token),
              NEXTOK_NO_VIABLE_TOKEN);
  logits[5] = NAN;
  CHECK_FAILS(nextok_sampler_sample(s, logits, vocab, NULL, 0, &token), NEXTOK_NAN_LOGITS);
  nextok_sampler_free(s);
  s = NULL;

  /* Bad configs name the field. */
  nextok_sampler_config_default(&cfg);
  cfg.top_p = -1.0f;
  CHECK_FAILS(nextok_sampler_new(&cfg, vocab, &s), NEXTOK_INVALID_ARGUMENT);
  CHECK(s == NULL && strcmp(nextok_last_error_param(), "top_p") == 0);
  nextok_sampler_config_default(&cfg);
  cfg.filter_order = 9;
  CHECK_FAILS(nextok_sampler_new(&cfg, vocab, &s), NEXTOK_INVALID_ARGUMENT);
  nextok_sampler_config_default(&cfg);
  cfg.struct_size = 0;
  CHECK_FAILS(nextok_sampler_new(&cfg, vocab, &s), NEXTOK_INVALID_ARGUMENT);
  nextok_sampler_config_default(&cfg);
  cfg.logit_bias_count = 2;
  CHECK_FAILS(nextok_sampler_new(&cfg, vocab, &s), NEXTOK_INVALID_ARGUMENT);
  CHECK(s == NULL);

  /* Buffers too small: the size needed comes back. */
  {
    static const char kText[] = "hello world";
    CHECK_FAILS(nextok_tokenize(tok, kText, strlen(kText), false, &token, 1, &n),
                NEXTOK_BUFFER_TOO_SMALL);
    CHECK(n >= 2);
    token = 0;
    CHECK(nextok_tokenize(tok, kText, 5, false, &token, 1, &n) == NEXTOK_OK && n == 1);
    CHECK_FAILS(nextok_detokenize(tok, &token, 1, false, small, 1, &n), NEXTOK_BUFFER_TOO_SMALL);
    CHECK(n == 5);
  }
  CHECK(strcmp(nextok_status_name(NEXTOK_MASK_SIZE_MISMATCH), "mask_size_mismatch") == 0);

  nextok_matcher_free(m);
  nextok_grammar_free(g);
  free(mask);
  free(logits);
}

int main(int argc, char** argv) {
  nextok_tokenizer* tok = NULL;
  if (argc != 2) {
    fprintf(stderr, "usage: %s <tokenizer dir or file>\n", argv[0]);
    return 1;
  }
  CHECK(nextok_abi_version() == NEXTOK_ABI_VERSION);
  CHECK(nextok_version()[0] != '\0');
  if (nextok_tokenizer_load(argv[1], &tok) != NEXTOK_OK) {
    fprintf(stderr, "cannot load the tokenizer fixture %s: %s\n", argv[1], nextok_last_error());
    return 1;
  }
  printf("vocab size %zu\n", nextok_tokenizer_vocab_size(tok));
  test_json_object_and_tokenizer(tok);
  test_logprobs();
  test_errors(tok);
  test_constrained_loop(tok); /* the grammar outlives nothing: freed early inside */
  nextok_tokenizer_free(tok);
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("capi_test: all checks passed\n");
  return 0;
}
