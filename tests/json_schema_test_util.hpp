// Helpers shared by the JSON Schema test files: the Llama-3.1 tokenizer and
// its TokenIndex (built once per test binary), compiling schemas, and
// checking texts against them through the public JsonConstraint API.
#pragma once

#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <exception>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/tokenizer.hpp"

namespace schema_test {

inline std::filesystem::path llama_dir() {
#ifdef NEXTOK_TOKENIZERS_DIR
  return std::filesystem::path(NEXTOK_TOKENIZERS_DIR) / "llama3.1";
#else
  return "/nonexistent";
#endif
}

// The Llama-3.1 tokenizer, or null when the shared files are not there.
inline const nextok::Tokenizer* llama() {
  static const std::unique_ptr<const nextok::Tokenizer> tok =
      []() -> std::unique_ptr<const nextok::Tokenizer> {
    if (!std::filesystem::exists(llama_dir() / "tokenizer.json")) return nullptr;
    return std::make_unique<const nextok::Tokenizer>(nextok::Tokenizer::from_dir(llama_dir()));
  }();
  return tok.get();
}

// One TokenIndex for the whole test binary (null without the tokenizer).
inline std::shared_ptr<const nextok::TokenIndex> llama_index() {
  static const std::shared_ptr<const nextok::TokenIndex> index =
      llama() ? nextok::TokenIndex::build(llama()->shared_vocab()) : nullptr;
  return index;
}

#define SCHEMA_TEST_NEEDS_LLAMA() \
  NEXTOK_REQUIRE_FIXTURE(schema_test::llama_index() != nullptr, "the Llama-3.1 tokenizer")

using Options = nextok::JsonConstraintOptions;

inline Options lenient() {
  Options opt;
  opt.strict = false;
  return opt;
}

inline std::shared_ptr<const nextok::JsonGrammar> compile(std::string_view schema,
                                                          const Options& opt = {}) {
  return nextok::JsonGrammar::from_schema(llama_index(), schema, opt);
}

// The text is a complete value of the schema.
inline bool matches(std::string_view schema, std::string_view text, const Options& opt = {}) {
  return nextok::JsonConstraint(compile(schema, opt)).completes_with(text);
}

// The text can start a value of the schema.
inline bool prefix_ok(std::string_view schema, std::string_view text, const Options& opt = {}) {
  return nextok::JsonConstraint(compile(schema, opt)).accepts_bytes(text);
}

// "<code name> <param>" of the nextok::Error f throws; "" when it throws
// none. Any other exception is a broken contract, reported as "foreign: ...".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const nextok::Error& e) {
    return std::string(nextok::error_code_name(e.code())) + " " + e.param();
  } catch (const std::exception& e) {
    return std::string("foreign: ") + e.what();
  }
  return "";
}

inline std::string schema_error(std::string_view schema, const Options& opt = {}) {
  return error_of([&] { (void)compile(schema, opt); });
}

// Every text of `valid` is a complete value of the grammar; none of `invalid` is.
inline void expect_texts(const std::shared_ptr<const nextok::JsonGrammar>& g,
                         std::initializer_list<std::string_view> valid,
                         std::initializer_list<std::string_view> invalid) {
  const nextok::JsonConstraint c(g);
  for (std::string_view t : valid) EXPECT_TRUE(c.completes_with(t)) << "refused: " << t;
  for (std::string_view t : invalid) EXPECT_FALSE(c.completes_with(t)) << "accepted: " << t;
}

inline void expect_schema(std::string_view schema, std::initializer_list<std::string_view> valid,
                          std::initializer_list<std::string_view> invalid,
                          const Options& opt = {}) {
  SCOPED_TRACE(std::string("schema: ") + std::string(schema));
  expect_texts(compile(schema, opt), valid, invalid);
}

}  // namespace schema_test
