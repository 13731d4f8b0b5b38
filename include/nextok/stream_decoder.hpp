// Ids to text for callers that tokenize elsewhere: DecodeOptions and the
// streaming decoder need only a Vocabulary (component nextok::vocab).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "nextok/vocab.hpp"

namespace nextok {

struct DecodeOptions {
  bool skip_special = false;  // drop kSpecial tokens from the output
};

// Streaming decoder: turns ids into text one at a time, holding back the
// bytes of a UTF-8 character that is not complete yet.
class StreamDecoder {
 public:
  explicit StreamDecoder(std::shared_ptr<const Vocabulary> vocab, DecodeOptions opt = {});
  // The text that became complete with this token (possibly empty).
  std::string push(uint32_t id);
  // Whatever is still held back, invalid bytes replaced with U+FFFD.
  std::string flush();
  size_t pending_bytes() const noexcept { return pending_.size(); }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  DecodeOptions opt_;
  std::string pending_;
};

}  // namespace nextok
