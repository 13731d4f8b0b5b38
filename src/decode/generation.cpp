// Generation: choosing, emission and the step machine (docs/decode-loop.md).
// Plain decoding is speculation with no draft: every call is the last
// token plus the draft tokens the constraint allows, and its rows verify
// them in order.
#include "decode/generation_impl.hpp"

#include "nextok/error.hpp"
#include "nextok/mask.hpp"

namespace nextok {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A vocabulary the generation only reads; StreamDecoder wants shared ownership.
std::shared_ptr<const Vocabulary> borrow(const Vocabulary& vocab) {
  return {std::shared_ptr<const Vocabulary>(), &vocab};
}

void validate(const Vocabulary& vocab, std::size_t logits_width,
              std::span<const std::int32_t> prompt, const GenerateOptions& opt) {
  if (prompt.empty()) throw Error(ErrorCode::kInvalidArgument, "prompt", "the prompt is empty");
  if (opt.max_tokens == 0) {
    throw Error(ErrorCode::kInvalidArgument, "max_tokens", "max_tokens must be at least 1");
  }
  if (!vocab.fits_logits_width(logits_width)) {
    throw Error(ErrorCode::kShapeMismatch, "model",
                "the model's logits row is narrower than the vocabulary");
  }
  const auto& spec = opt.speculative;
  if (spec.drafter != nullptr) {
    if (spec.max_draft < 1 || spec.max_draft > 64) {
      throw Error(ErrorCode::kInvalidArgument, "speculative",
                  "speculative.max_draft must be in [1, 64]");
    }
    if (opt.sampler.sampling_active() && !spec.stochastic) {
      throw Error(ErrorCode::kInvalidArgument, "speculative",
                  "temperature > 0 with speculative decoding needs stochastic verification "
                  "(speculative.stochastic)");
    }
  }
  if (opt.think.enabled && opt.think.budget && !vocab.find(opt.think.close)) {
    throw Error(ErrorCode::kInvalidArgument, "thinking_budget",
                "the vocabulary has no single token for \"" + opt.think.close + "\"");
  }
}

}  // namespace

Generation::Impl::Impl(const Vocabulary& vocab_, std::size_t logits_width,
                       std::span<const std::int32_t> prompt, const GenerateOptions& opt_,
                       TokenCallback on_token_)
    : vocab(vocab_),
      opt((validate(vocab_, logits_width, prompt, opt_), opt_)),
      on_token(std::move(on_token_)),
      prompt_length(prompt.size()),
      sampler(opt.sampler, opt.penalties),
      splitter(opt.think),
      stop(opt.stop),
      decoder(borrow(vocab_), DecodeOptions{.skip_special = true}),
      constraint(opt.constraint) {
  eos = opt.eos_ids.empty()
            ? std::vector<std::uint32_t>(vocab.eos_ids().begin(), vocab.eos_ids().end())
            : opt.eos_ids;
  if (constraint != nullptr) {
    mask.resize(bitmask_words(logits_width));
    think_reported_open = !splitter.in_content();
    constraint->set_think_open(think_reported_open);
  }
  context.assign(prompt.begin(), prompt.end());
  next = {0, context, false};
  model_length = prompt.size();
}

bool Generation::Impl::is_eos(std::int32_t token) const {
  for (std::uint32_t e : eos) {
    if (static_cast<std::int64_t>(e) == token) return true;
  }
  return false;
}

// ---- constraint -------------------------------------------------------------

std::span<const std::uint32_t> Generation::Impl::current_mask() {
  if (constraint == nullptr || !constraint->wants_mask()) return {};
  if (!mask_valid) {
    const auto t0 = Clock::now();
    constraint->step_mask(mask);
    result.stats.constraint_seconds += seconds_since(t0);
    mask_valid = true;
  }
  return mask;
}

void Generation::Impl::advance_constraint(std::int32_t token) {
  if (constraint == nullptr) return;
  const auto t0 = Clock::now();
  constraint->advance(static_cast<std::uint32_t>(token));
  mask_valid = false;
  result.stats.constraint_seconds += seconds_since(t0);
}

std::size_t Generation::Impl::constraint_prefix(std::span<const std::int32_t> tokens) {
  if (constraint == nullptr || !constraint->wants_mask()) return tokens.size();
  const auto t0 = Clock::now();
  std::size_t n = 0;
  for (; n < tokens.size(); ++n) {
    try {
      constraint->advance(static_cast<std::uint32_t>(tokens[n]));
    } catch (const Error&) {
      break;
    }
  }
  constraint->rollback(n);
  result.stats.constraint_seconds += seconds_since(t0);
  return n;
}

// ---- choosing -----------------------------------------------------------------

Chosen Generation::Impl::choose(const LogitsView& row) {
  const auto m = current_mask();
  const auto t0 = Clock::now();
  StepResult r = sampler.next(row, m);
  result.stats.sampler_seconds += seconds_since(t0);
  advance_constraint(r.token);
  return {r.token, std::move(r.logprobs)};
}

Chosen Generation::Impl::choose_against_draft(const LogitsView& row, std::int32_t d,
                                              const Distribution* q) {
  const auto m = current_mask();
  const auto t0 = Clock::now();
  const Distribution p = sampler.distribution(row, m);
  const Acceptance a = accept_draft_token(p, q, d, sampler.rng());
  sampler.accept(a.token);
  Chosen c{a.token, std::nullopt};
  if (opt.sampler.top_logprobs_k > 0) {
    c.logprobs = compute_top_logprobs(row, a.token, opt.sampler.top_logprobs_k);
  }
  result.stats.sampler_seconds += seconds_since(t0);
  advance_constraint(a.token);
  return c;
}

Chosen Generation::Impl::forced_close() {
  const auto id = static_cast<std::int32_t>(*vocab.find(opt.think.close));
  sampler.accept(id);
  advance_constraint(id);
  ++result.stats.forced;
  return {id, std::nullopt, true};
}

// ---- emission -------------------------------------------------------------------

bool Generation::Impl::emit(const Chosen& c) {
  result.tokens.push_back(c.token);
  context.push_back(c.token);
  if (opt.sampler.top_logprobs_k > 0) result.logprobs.push_back(c.logprobs);
  TokenEvent ev;
  ev.token = c.token;
  ev.forced = c.forced;
  ev.drafted = c.drafted;
  ev.logprobs = c.logprobs ? &*c.logprobs : nullptr;
  const bool was_think = splitter.in_think();
  const bool is_end = is_eos(c.token);
  const bool last = is_end || result.tokens.size() >= opt.max_tokens;
  std::string text = is_end ? std::string() : decoder.push(static_cast<std::uint32_t>(c.token));
  if (last) text += decoder.flush();
  routed.clear();
  splitter.push(text, routed);
  if (last) splitter.flush(routed);
  ev.reasoning = routed.reasoning;
  ev.content = stop.push(routed.content);
  if (last && !stop.matched()) ev.content += stop.flush();
  ev.channel = was_think || splitter.in_think() ? Channel::kReasoning : Channel::kContent;
  bool finished = last;
  if (is_end) {
    result.finish = FinishReason::kStop;
  } else if (stop.matched()) {
    result.finish = FinishReason::kStop;
    result.stop_string = stop.matched_string();
    finished = true;
  } else if (last) {
    result.finish = FinishReason::kLength;
  }
  result.reasoning += ev.reasoning;
  result.content += ev.content;
  if (think_reported_open && splitter.in_content()) {
    think_reported_open = false;
    constraint->set_think_open(false);
    mask_valid = false;
  }
  if (on_token && !on_token(ev) && !finished) {
    result.finish = FinishReason::kCancelled;
    finished = true;
  }
  return finished;
}

// ---- the step machine -------------------------------------------------------------

void Generation::Impl::call(std::span<const std::int32_t> tokens, bool all_logits,
                            std::size_t keep) {
  batch.assign(tokens.begin(), tokens.end());
  next = {keep, batch, all_logits};
  model_length = keep + batch.size();
  ++result.stats.steps;
}

void Generation::Impl::finish_now(FinishReason reason) {
  result.finish = reason;
  phase = Phase::kDone;
  next = {};
}

// Emits `c`, then queues what follows it: the step that is discarded after
// a forced close latches, or `c` with a draft to verify.
void Generation::Impl::after_choice(const Chosen& c) {
  if (emit(c)) {
    phase = Phase::kDone;
    next = {};
    return;
  }
  const std::size_t keep = model_length;
  if (splitter.take_force_close()) {
    // The step over c is kept; its successor is never chosen.
    call(std::span(&c.token, 1), false, keep);
    phase = Phase::kDiscard;
    return;
  }
  draft_used = 0;
  draft.clear();
  if (Drafter* drafter = opt.speculative.drafter; drafter != nullptr) {
    // Accepted drafts plus the correction or bonus token must fit.
    const std::size_t room = opt.max_tokens - result.tokens.size();
    const std::size_t k = std::min<std::size_t>(opt.speculative.max_draft, room - 1);
    if (k > 0 && !is_eos(c.token)) drafter->propose(context, k, draft);
    if (draft.tokens.size() > k) draft.tokens.resize(k);
    draft_used = constraint_prefix(draft.tokens);
  }
  std::vector<std::int32_t> tokens(1, c.token);
  tokens.insert(tokens.end(), draft.tokens.begin(),
                draft.tokens.begin() + static_cast<std::ptrdiff_t>(draft_used));
  verify_base = keep;
  call(tokens, draft_used > 0, keep);
  result.stats.drafted += draft_used;
  phase = draft_used > 0 ? Phase::kVerify : Phase::kNext;
}

void Generation::Impl::feed(const LogitsView& rows) {
  switch (phase) {
    case Phase::kDone:
      throw Error(ErrorCode::kInvalidArgument, "generation", "the generation has finished");
    case Phase::kFirst:
    case Phase::kNext:
      return after_choice(choose(rows.rows > 1 ? rows.row(rows.rows - 1) : rows));
    case Phase::kDiscard:
      ++result.stats.discarded_successors;
      return after_choice(forced_close());
    case Phase::kVerify:
      break;
  }
  if (rows.rows != static_cast<std::int64_t>(draft_used) + 1) {
    throw Error(
        ErrorCode::kShapeMismatch, "rows",
        "a verification call needs one row per token (" + std::to_string(draft_used + 1) + ")");
  }
  for (std::size_t i = 0; i < draft_used; ++i) {
    const std::int32_t d = draft.tokens[i];
    const Distribution* q = i < draft.probs.size() ? &draft.probs[i] : nullptr;
    const LogitsView row = rows.row(static_cast<std::int64_t>(i));
    Chosen t = opt.sampler.sampling_active() ? choose_against_draft(row, d, q) : choose(row);
    if (t.token != d) {  // the correction token; the rest of the draft is dropped
      model_length = verify_base + 1 + i;
      return after_choice(t);
    }
    ++result.stats.accepted;
    t.drafted = true;
    if (emit(t)) {
      phase = Phase::kDone;
      next = {};
      return;
    }
    if (splitter.take_force_close()) {
      model_length = verify_base + 2 + i;
      ++result.stats.discarded_successors;
      return after_choice(forced_close());
    }
  }
  after_choice(choose(rows.row(static_cast<std::int64_t>(draft_used))));  // the bonus token
}

// ---- the public wrapper --------------------------------------------------------------

Generation::Generation(const Vocabulary& vocab, std::size_t logits_width,
                       std::span<const std::int32_t> prompt, const GenerateOptions& options,
                       TokenCallback on_token)
    : impl_(std::make_unique<Impl>(vocab, logits_width, prompt, options, std::move(on_token))) {}
Generation::~Generation() = default;
Generation::Generation(Generation&&) noexcept = default;
Generation& Generation::operator=(Generation&&) noexcept = default;

bool Generation::done() const noexcept {
  return impl_->phase == Impl::Phase::kDone;
}

const Generation::Call& Generation::next_call() const {
  if (done()) throw Error(ErrorCode::kInvalidArgument, "generation", "the generation has finished");
  return impl_->next;
}

void Generation::prepare() {
  // Before a discarded step the next mask would be for the wrong state.
  if (impl_->phase != Impl::Phase::kDiscard && impl_->phase != Impl::Phase::kDone) {
    impl_->prepare_mask();
  }
}

void Generation::feed(const LogitsView& rows) {
  impl_->feed(rows);
}

void Generation::cancel() {
  if (!done()) impl_->finish_now(FinishReason::kCancelled);
}

const GenerateResult& Generation::result() const noexcept {
  return impl_->result;
}
GenerateResult Generation::take_result() {
  return std::move(impl_->result);
}

}  // namespace nextok
