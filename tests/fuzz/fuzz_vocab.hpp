// Shared by the constraint fuzz targets: a small synthetic byte-level BPE
// vocabulary (every single byte, JSON punctuation and literals, digits,
// words, multi-byte UTF-8 and split UTF-8 pieces, a special EOS, another
// special token and an added token duplicating a model token's bytes),
// loaded through Tokenizer::from_json so the targets need no files.
// NEXTOK_FUZZ_TOKENIZER (a tokenizer directory, tokenizer.json or .gguf)
// replaces it with a real vocabulary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/json_schema.hpp"
#include "nextok/mask.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok_fuzz {

inline std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// GPT-2 bytes_to_unicode: the byte-level alphabet of tokenizer.json files.
inline std::string byte_level(std::string_view bytes) {
  auto printable = [](unsigned c) {
    return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
  };
  std::string out;
  for (unsigned char b : bytes) {
    uint32_t cp = b;
    if (!printable(b)) {
      uint32_t n = 0;
      for (unsigned c = 0; c < b; ++c) n += printable(c) ? 0 : 1;
      cp = 256 + n;
    }
    out += utf8_encode(cp);
  }
  return out;
}

inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline constexpr const char* kEos = "</s>";

// Multi-byte tokens first so that "lowest allowed id" walks take JSON-sized
// steps; then the 256 single bytes; then the added tokens.
inline std::string synthetic_tokenizer_json() {
  const std::vector<std::string> pieces = {
      "{\"",      "\":",      "\",",        "\"}",      "\":\"",
      "\",\"",    "}}",       "]}",         "[{",       "},{",
      "\"]",      "[\"",      "\", \"",     "\": ",     ", ",
      ": ",       " \"",      "  ",         "    ",     "\n",
      "\n ",      "\n  ",     "{}",         "[]",       "\"\"",
      "true",     "false",    "null",       "tru",      "fals",
      "nul",      "ull",      "rue",        "alse",     "00",
      "12",       "123",      "10",         "99",       "0.",
      ".5",       "-1",       "e+",         "E-",       "1e",
      "2024",     "-01",      "-12",        "-31",      "T12",
      ":00",      ":59",      "Z\"",        "name",     "age",
      "email",    "id",       "type",       "value",    "items",
      "tags",     "kind",     "circle",     "square",   "radius",
      "side",     "children", "code",       "tag",      "red",
      "green",    "blue",     "abc",        "foo",      "bar",
      "ab",       "AB",       "-123",       "http",     "https",
      "://",      "www",      ".com",       "@",        "user",
      "example",  "\\n",      "\\\"",       "\\\\",     "\\u",
      "\\u00",    "\\ud83d",  "\\ude00",    "\xC3\xA9", "\xF0\x9F\x98\x80",
      "\xE2\x82", "\x82\xAC", "\xC3\xA9\"", "\"\xC3",   " the",
      " a",       "a\"",      "1,",         "0]",       "1}",
      "12345678", "-4",       "abcdef",     "0123",     "4567-",
      "89ab",     "{\n",      "\n}",        ",\n",      "\t",
      "\r\n"};
  std::set<std::string> seen;
  std::string vocab;
  uint32_t id = 0;
  auto add = [&](const std::string& bytes) {
    const std::string text = byte_level(bytes);
    if (!seen.insert(text).second) return;
    if (!vocab.empty()) vocab += ',';
    vocab += json_quote(text) + ':' + std::to_string(id++);
  };
  for (const auto& p : pieces)
    if (p.size() > 1) add(p);
  for (unsigned b = 0; b < 256; ++b) add(std::string(1, static_cast<char>(b)));
  const uint32_t eos = id, pad = id + 1, dup = id + 2;
  return "{\"model\": {\"type\": \"BPE\", \"vocab\": {" + vocab +
         "}, \"merges\": []}, \"decoder\": {\"type\": \"ByteLevel\"}, \"added_tokens\": ["
         "{\"id\": " +
         std::to_string(eos) + ", \"content\": \"" + kEos +
         "\", \"special\": true},"
         "{\"id\": " +
         std::to_string(pad) +
         ", \"content\": \"<|pad|>\", \"special\": true},"
         "{\"id\": " +
         std::to_string(dup) + ", \"content\": \"true\", \"special\": false}]}";
}

inline std::shared_ptr<const nextok::Vocabulary> fuzz_vocabulary() {
  if (const char* path = std::getenv("NEXTOK_FUZZ_TOKENIZER"); path != nullptr && *path != 0) {
    return nextok::load_vocabulary(path);
  }
  const std::string config = std::string("{\"eos_token\": \"") + kEos + "\"}";
  return nextok::Tokenizer::from_json(synthetic_tokenizer_json(), config).shared_vocab();
}

inline std::shared_ptr<const nextok::TokenIndex> fuzz_index() {
  static const std::shared_ptr<const nextok::TokenIndex> index =
      nextok::TokenIndex::build(fuzz_vocabulary());
  return index;
}

// splitmix64: a small deterministic generator seeded from the input.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

// NEXTOK_FUZZ_SKIP="msg1|msg2": checks whose failure message contains one of
// these strings end the input (Skipped) instead of crashing, to fuzz on past
// a known finding; NEXTOK_FUZZ_SKIP_LOG=1 still prints them.
struct Skipped {};

inline bool skipped(std::string_view what) {
  static const std::string skip = [] {
    const char* s = std::getenv("NEXTOK_FUZZ_SKIP");
    return std::string(s != nullptr ? s : "");
  }();
  for (size_t at = 0; at < skip.size();) {
    size_t end = skip.find('|', at);
    if (end == std::string::npos) end = skip.size();
    if (end > at && what.find(std::string_view(skip).substr(at, end - at)) != std::string::npos)
      return true;
    at = end + 1;
  }
  return false;
}

// The bytes as a C string literal body (\n, \x01, \\), for messages.
inline void print_escaped(std::FILE* out, std::string_view s) {
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      std::fprintf(out, "\\%c", c);
    } else if (c == '\n') {
      std::fprintf(out, "\\n");
    } else if (c < 0x20 || c == 0x7F) {
      std::fprintf(out, "\\x%02x", c);
    } else {
      std::fputc(c, out);
    }
  }
}

inline bool log_skipped() {
  static const bool log = std::getenv("NEXTOK_FUZZ_SKIP_LOG") != nullptr;
  return log;
}

inline uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace nextok_fuzz
