// A pre-tokenizer regex compiled with PCRE2 (UTF, UCP, JIT). Patterns are
// written for Oniguruma, which HF `tokenizers` uses; translate() rewrites the
// constructs whose meaning differs so that matches are identical.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace nextok::vocab {

// The characters Rust's regex crate reads as Unicode \w, as a class body
// (no brackets): HF's Whitespace pre-tokenizer and its added tokens'
// single_word test use that \w.
inline constexpr std::string_view kRustWordChars =
    R"(\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D})";

class Regex {
 public:
  // Throws Error{kUnsupported} naming the pattern when PCRE2 rejects it.
  explicit Regex(const std::string& oniguruma_pattern);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Finds the next match in subject at or after `from`. Returns false when
  // there is none; otherwise sets [begin, end). Thread-safe.
  bool find(std::string_view subject, size_t from, size_t& begin, size_t& end) const;

  // The PCRE2 form of an Oniguruma pattern (exposed for tests).
  static std::string translate(std::string_view pattern);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nextok::vocab
