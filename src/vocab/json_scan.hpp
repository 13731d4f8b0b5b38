// A small validating JSON scanner for the two large members of
// tokenizer.json (model.vocab and model.merges). Strings come back as views
// into the input when they have no escapes, so a 30 MB file is read without
// building a DOM; other members are returned as raw spans for simdjson.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>

namespace nextok::vocab {

class JsonScanner {
 public:
  // `name` labels errors; `in` must outlive every view handed out. Throws
  // kMalformedFile when `in` is not valid UTF-8 (checked once, up front).
  JsonScanner(std::string_view in, std::string_view name);
  // Starts at `start` in input already validated by another scanner.
  JsonScanner(std::string_view in, std::string_view name, size_t start)
      : in_(in), name_(name), pos_(start) {}
  void seek(size_t pos) noexcept { pos_ = pos; }

  void skip_ws() noexcept {
    // Pretty-printed files are half indentation: after each newline, skip
    // runs of spaces 8 at a time.
    constexpr uint64_t kSpaces = 0x2020202020202020ULL;
    const size_t n = in_.size();
    for (;;) {
      while (pos_ + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, in_.data() + pos_, 8);
        if (w != kSpaces) break;
        pos_ += 8;
      }
      if (pos_ >= n) return;
      const char c = in_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }
  // Consumes `c` after whitespace or fails.
  void expect(char c);
  // Consumes `c` after whitespace if present.
  bool consume(char c) noexcept {
    skip_ws();
    if (pos_ < in_.size() && in_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char peek() noexcept {
    skip_ws();
    return pos_ < in_.size() ? in_[pos_] : '\0';
  }
  // A string (after whitespace): a view into the input, or into `arena` when
  // it had escapes. Validates escapes.
  std::string_view string(std::deque<std::string>& arena);
  // A non-negative integer that fits in 31 bits.
  uint32_t id();
  // Skips any value, validating it; returns its raw text.
  std::string_view value();
  bool at_end() noexcept {
    skip_ws();
    return pos_ == in_.size();
  }
  size_t offset() const noexcept { return pos_; }

  [[noreturn]] void fail(const std::string& what) const;

 private:
  void skip_string();
  void skip_number();
  void skip_literal(std::string_view word);
  uint32_t hex4();

  std::string_view in_;
  std::string_view name_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::deque<std::string> scratch_;  // unescaped strings that are skipped
};

}  // namespace nextok::vocab
