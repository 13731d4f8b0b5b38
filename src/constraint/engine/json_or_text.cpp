// Text or one bare JSON value, decided by the first non-whitespace byte
// (nextok/json_or_text.hpp). While undecided, the mask is the union of the
// tokens that decide for text, the whitespace-only tokens, the marker, and
// the JSON grammar's own mask (which holds the tokens that open the value,
// whitespace-led or not); EOS is allowed, since an empty turn is text.
#include "nextok/json_or_text.hpp"

#include <algorithm>

#include "constraint/engine/json_impl.hpp"
#include "constraint/engine/mask_bits.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"

namespace nextok {
namespace {

constexpr std::string_view kJsonSpace = " \t\n\r";

}  // namespace

std::shared_ptr<const JsonOrTextGrammar> JsonOrTextGrammar::build(
    std::shared_ptr<const TokenIndex> index, std::shared_ptr<const JsonGrammar> value,
    std::string_view marker) {
  if (!index)
    throw Error(ErrorCode::kInvalidArgument, "index", "JsonOrTextGrammar needs a TokenIndex");
  if (!value)
    throw Error(ErrorCode::kInvalidArgument, "value", "JsonOrTextGrammar needs a grammar");
  if (&value->impl().index->vocab() != &index->vocab())
    throw Error(ErrorCode::kInvalidArgument, "value",
                "the JSON grammar was compiled for another vocabulary");
  std::shared_ptr<JsonOrTextGrammar> g(new JsonOrTextGrammar());
  const Vocabulary& vocab = index->vocab();
  const size_t words = bitmask_words(vocab.size());
  g->text_start_.assign(words, 0);
  g->blank_.assign(words, 0);
  g->any_.assign(words, 0);
  for (uint32_t id = 0; id < vocab.size(); ++id) {
    const std::string_view bytes = vocab.bytes(id);
    if (bytes.empty() || vocab.is_eos(id)) continue;
    bitmask_set(g->any_, id, true);
    if (!marker.empty() && vocab.is_special(id) && bytes == marker && !g->marker_) g->marker_ = id;
    const size_t lead = bytes.find_first_not_of(kJsonSpace);
    if (vocab.is_special(id) || (lead != std::string_view::npos && bytes[lead] != '{'))
      bitmask_set(g->text_start_, id, true);
    else if (lead == std::string_view::npos)
      bitmask_set(g->blank_, id, true);
  }
  g->index_ = std::move(index);
  g->value_ = std::move(value);
  return g;
}

JsonOrTextConstraint::JsonOrTextConstraint(std::shared_ptr<const JsonOrTextGrammar> grammar)
    : grammar_(std::move(grammar)), value_(grammar_ ? grammar_->value() : nullptr), steps_(1) {}

JsonOrTextConstraint::JsonOrTextConstraint(const JsonOrTextConstraint& other)
    : grammar_(other.grammar_),
      value_(other.value_),
      steps_(other.steps_),
      think_open_(other.think_open_) {}

JsonOrTextConstraint::~JsonOrTextConstraint() = default;

std::unique_ptr<ConstraintEngine> JsonOrTextConstraint::clone() const {
  return std::make_unique<JsonOrTextConstraint>(*this);
}

void JsonOrTextConstraint::reset() {
  steps_.assign(1, Step{});
  value_.reset();
}

bool JsonOrTextConstraint::is_complete() const noexcept {
  const Step& s = steps_.back();
  return s.mode != Mode::kValue || s.finished || value_.is_complete();
}

bool JsonOrTextConstraint::can_continue() const {
  const Step& s = steps_.back();
  if (s.finished) return false;
  return s.mode != Mode::kValue || value_.can_continue();
}

void JsonOrTextConstraint::step_mask(std::span<uint32_t> mask) {
  const Vocabulary& vocab = grammar_->vocab();
  const Step& s = steps_.back();
  if (s.mode == Mode::kValue && !s.finished) {
    value_.step_mask(mask);  // EOS once the value is complete
    return;
  }
  const size_t words = constraint::clear_mask(mask, vocab);
  if (s.finished) {
    constraint::allow_eos(mask, vocab);
    return;
  }
  if (s.mode == Mode::kText) {
    std::copy_n(grammar_->any().begin(), words, mask.begin());
  } else {
    if (s.value_alive) {
      scratch_.resize(mask.size());
      value_.step_mask(scratch_);
      std::copy_n(scratch_.begin(), words, mask.begin());
    }
    const auto text = grammar_->text_start();
    const auto blank = grammar_->blank();
    for (size_t w = 0; w < words; ++w) mask[w] |= text[w] | blank[w];
  }
  constraint::allow_eos(mask, vocab);
}

void JsonOrTextConstraint::advance(uint32_t token) {
  const Vocabulary& vocab = grammar_->vocab();
  Step next = steps_.back();
  auto refuse = [&](const char* why) {
    throw Error(ErrorCode::kInvalidArgument, "token",
                "token " + std::to_string(token) + " is not allowed here: " + why);
  };
  if (think_open_) {
    // Reasoning is not constrained; the state does not move.
  } else if (vocab.is_eos(token)) {
    if (!next.finished && !is_complete()) refuse("EOS before the JSON value is complete");
    next.finished = true;
  } else if (next.finished) {
    refuse("a token after EOS");
  } else if (next.mode == Mode::kValue) {
    value_.advance(token);  // throws, state unchanged, for a token it refuses
    ++next.value_steps;
  } else {
    const std::string_view bytes = vocab.bytes(token);
    if (token >= vocab.size() || bytes.empty()) refuse("not a token of the vocabulary");
    if (next.mode == Mode::kUndecided) {
      const size_t lead = bytes.find_first_not_of(kJsonSpace);
      if (grammar_->marker() == token && !next.marker_seen) {
        next.marker_seen = true;
      } else if (vocab.is_special(token) ||
                 (lead != std::string_view::npos && bytes[lead] != '{')) {
        next.mode = Mode::kText;
      } else if (lead == std::string_view::npos) {
        // Whitespace before the decision: the value reads it while it can.
        if (next.value_alive && value_.accepts_bytes(bytes)) {
          value_.advance(token);
          ++next.value_steps;
        } else {
          next.value_alive = false;
        }
      } else {
        if (!next.value_alive) refuse("the JSON value can no longer begin");
        value_.advance(token);
        ++next.value_steps;
        next.mode = Mode::kValue;
      }
    }
  }
  steps_.push_back(next);
}

void JsonOrTextConstraint::rollback(size_t n) {
  if (n > steps()) {
    throw Error(ErrorCode::kInvalidArgument, "n",
                "cannot roll back " + std::to_string(n) + " steps; only " +
                    std::to_string(steps()) + " taken");
  }
  const size_t read = steps_.back().value_steps;
  steps_.resize(steps_.size() - n);
  value_.rollback(read - steps_.back().value_steps);
}

}  // namespace nextok
