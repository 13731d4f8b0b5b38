#include "nextok/stream_decoder.hpp"

#include <string>
#include <utility>

#include "nextok/error.hpp"
#include "vocab/utf8.hpp"

namespace nextok {

StreamDecoder::StreamDecoder(std::shared_ptr<const Vocabulary> vocab, DecodeOptions opt)
    : vocab_(std::move(vocab)), opt_(opt) {}

std::string StreamDecoder::push(uint32_t id) {
  if (id >= vocab_->size()) {
    throw Error(ErrorCode::kInvalidArgument, "id",
                "token id " + std::to_string(id) + " is outside the vocabulary");
  }
  if (opt_.skip_special && vocab_->is_special(id)) return {};
  pending_.append(vocab_->bytes(id));
  const size_t ready = vocab::utf8_complete_prefix(pending_);
  std::string out;
  vocab::utf8_append_replacing(std::string_view(pending_).substr(0, ready), out);
  pending_.erase(0, ready);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  vocab::utf8_append_replacing(pending_, out);
  pending_.clear();
  return out;
}

}  // namespace nextok
