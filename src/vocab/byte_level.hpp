// The GPT-2 byte-level alphabet: every byte is spelled as one printable
// Unicode character so BPE vocabularies can be stored as JSON text.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace nextok::vocab {

struct ByteLevelAlphabet {
  std::array<uint16_t, 256> code_point{};       // byte → code point
  std::array<std::array<char, 2>, 256> utf8{};  // byte → its UTF-8 spelling (1 or 2 bytes)
  std::array<uint8_t, 256> utf8_size{};
  std::array<int16_t, 324> byte_of{};  // code point (< 324) → byte, -1 if not in the alphabet

  constexpr ByteLevelAlphabet() {
    for (auto& b : byte_of) b = -1;
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const int cp = printable ? b : 256 + n++;
      code_point[b] = static_cast<uint16_t>(cp);
      byte_of[cp] = static_cast<int16_t>(b);
      if (cp < 0x80) {
        utf8[b] = {static_cast<char>(cp), 0};
        utf8_size[b] = 1;
      } else {
        utf8[b] = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
        utf8_size[b] = 2;
      }
    }
  }
};

inline constexpr ByteLevelAlphabet kByteLevel{};

// Appends the alphabet spelling of raw bytes.
inline void to_byte_level(std::string_view raw, std::string& out) {
  for (unsigned char c : raw) out.append(kByteLevel.utf8[c].data(), kByteLevel.utf8_size[c]);
}

// Decodes an alphabet spelling into raw bytes. Returns false (out unchanged
// in meaning) when a character is outside the alphabet.
inline bool from_byte_level(std::string_view text, std::string& out) {
  const size_t start = out.size();
  for (size_t i = 0; i < text.size();) {
    const auto c0 = static_cast<unsigned char>(text[i]);
    uint32_t cp;
    if (c0 < 0x80) {
      cp = c0;
      i += 1;
    } else if ((c0 & 0xE0) == 0xC0 && i + 1 < text.size()) {
      cp = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      out.resize(start);
      return false;
    }
    if (cp >= kByteLevel.byte_of.size() || kByteLevel.byte_of[cp] < 0) {
      out.resize(start);
      return false;
    }
    out.push_back(static_cast<char>(kByteLevel.byte_of[cp]));
  }
  return true;
}

}  // namespace nextok::vocab
