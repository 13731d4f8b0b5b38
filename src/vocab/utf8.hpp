// UTF-8 helpers shared by the encoder (validation) and the decoders
// (streaming hold-back and U+FFFD replacement like Python's errors="replace").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nextok::vocab {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid or
// truncated. `*need` (when given) receives the length the lead byte asks for.
size_t utf8_sequence_length(std::string_view s, size_t i, size_t* need = nullptr) noexcept;

// Offset of the first invalid byte, or npos when the whole string is valid.
size_t utf8_first_invalid(std::string_view s) noexcept;

// The number of leading bytes that can be emitted now: everything except a
// trailing sequence that is still a valid prefix of some character.
size_t utf8_complete_prefix(std::string_view s) noexcept;

// Appends s with each maximal invalid subpart replaced by U+FFFD.
void utf8_append_replacing(std::string_view s, std::string& out);

// Decodes one code point at s[i] (s must be valid there); advances i.
uint32_t utf8_next(std::string_view s, size_t& i) noexcept;

// The Unicode White_Space property (Rust's char::is_whitespace).
constexpr bool is_white_space(uint32_t c) noexcept {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

}  // namespace nextok::vocab
