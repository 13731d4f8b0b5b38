/* nextok.h must compile as strict C99 (built, not run). */
#include "nextok/nextok.h"

size_t nextok_header_c99_check(void);
size_t nextok_header_c99_check(void) {
  nextok_sampler_config cfg;
  nextok_grammar_options opt;
  nextok_token_logprob lp = {0, 0.0f};
  (void)lp;
  return sizeof cfg + sizeof opt + (size_t)NEXTOK_OK;
}
