#include "reference/json_object_masks.hpp"

#include <algorithm>

#include "nextok/error.hpp"
#include "nextok/mask.hpp"

namespace nextok::reference {

JsonObjectMasks::JsonObjectMasks(std::shared_ptr<const Vocabulary> vocab,
                                 std::shared_ptr<const constraint::TokenTrie> trie,
                                 JsonAutomatonOptions opt)
    : vocab_(std::move(vocab)), trie_(std::move(trie)), grammar_(opt) {
  if (trie_->vocab_size() != vocab_->size()) {
    throw Error(ErrorCode::kInvalidArgument, "trie",
                "the token trie was built for another vocabulary");
  }
  reset();
}

void JsonObjectMasks::reset() {
  history_.assign(1, grammar_.start());
  finished_ = false;
}

void JsonObjectMasks::step_mask(std::span<uint32_t> mask) const {
  if (mask.size() != bitmask_words(vocab_->size())) {
    throw Error(ErrorCode::kMaskSizeMismatch, "mask",
                "the mask needs " + std::to_string(bitmask_words(vocab_->size())) + " words");
  }
  std::fill(mask.begin(), mask.end(), 0u);
  const JsonAutomatonState& s = history_.back();
  if (!finished_) trie_->allow(grammar_, s, mask);
  if (finished_ || grammar_.complete(s)) {
    for (uint32_t id : vocab_->eos_ids()) mask[id >> 5] |= 1u << (id & 31);
  }
}

void JsonObjectMasks::advance(uint32_t token) {
  auto refuse = [&](const char* why) {
    throw Error(ErrorCode::kInvalidArgument, "token",
                "token " + std::to_string(token) + " is not allowed here: " + why);
  };
  if (finished_) refuse("the output already ended");
  if (vocab_->is_eos(token)) {
    if (!grammar_.complete(history_.back())) refuse("the JSON object is not complete");
    history_.push_back(history_.back());
    finished_ = true;
    return;
  }
  const TokenKind kind = vocab_->kind(token);
  if (kind == TokenKind::kSpecial || kind == TokenKind::kAbsent) refuse("special or unknown token");
  const std::string_view bytes = vocab_->bytes(token);
  if (bytes.empty()) refuse("the token has no bytes");
  JsonAutomatonState s = history_.back(), next;
  for (unsigned char b : bytes) {
    if (!grammar_.step(s, b, next)) refuse("its bytes leave the JSON grammar");
    s = next;
  }
  history_.push_back(s);
}

void JsonObjectMasks::rollback(size_t n) {
  if (n > steps()) {
    throw Error(
        ErrorCode::kInvalidArgument, "n",
        "cannot roll back " + std::to_string(n) + " tokens after " + std::to_string(steps()));
  }
  for (size_t k = 0; k < n; ++k) {
    history_.pop_back();
    finished_ = false;
  }
}

}  // namespace nextok::reference
