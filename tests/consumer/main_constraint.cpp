// A downstream project with its own tokenizer that needs only the
// constraint engine: find_package(nextok COMPONENTS constraint), a
// vocabulary from token bytes, and a JSON Schema walked token by token.
#include <cstdio>
#include <nextok/json_schema.hpp>
#include <nextok/mask.hpp>
#include <nextok/vocab.hpp>
#include <string>
#include <vector>

int main() {
  const std::vector<std::string> tokens = {"{", "}", "\"a\"", ":", "1", "2", "x", "<eos>"};
  const std::vector<uint32_t> eos = {7};
  const auto vocab = nextok::Vocabulary::from_token_bytes(tokens, eos, eos);
  const auto grammar = nextok::JsonGrammar::from_schema(
      nextok::TokenIndex::build(vocab),
      R"({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
          "additionalProperties": false})");
  nextok::JsonConstraint c(grammar);
  std::vector<uint32_t> mask(nextok::bitmask_words(vocab->size()));
  bool ok = true;
  for (uint32_t id : {0u, 2u, 3u, 4u, 5u, 1u}) {  // {"a":12}
    c.step_mask(mask);
    ok = ok && nextok::bitmask_allows(mask, id) && !nextok::bitmask_allows(mask, 6) &&
         !nextok::bitmask_allows(mask, 7);
    c.advance(id);
  }
  c.step_mask(mask);
  ok = ok && nextok::bitmask_allows(mask, 7) && c.is_complete();
  std::printf("consumer (constraint): {\"a\":12} %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
