// The decode loop (docs/decode-loop.md). Three drivers share one emission
// path: the host loop (any sampling; the next mask is computed while the
// model runs), the device-pick loop (the spec's greedy fast path: the model
// picks and feeds its own argmax) and the speculative loop.
#include <chrono>

#include "decode/stop_strings.hpp"
#include "nextok/error.hpp"
#include "nextok/generate.hpp"
#include "nextok/mask.hpp"
#include "nextok/sampler.hpp"
#include "nextok/stream_decoder.hpp"

namespace nextok {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Chosen {
  std::int32_t token = 0;
  std::optional<TokenLogprobs> logprobs;
  bool forced = false;
  bool drafted = false;
};

// A vocabulary the loop only reads; StreamDecoder wants shared ownership.
std::shared_ptr<const Vocabulary> borrow(const Vocabulary& vocab) {
  return {std::shared_ptr<const Vocabulary>(), &vocab};
}

class Loop {
 public:
  Loop(Model& model, const Vocabulary& vocab, std::span<const std::int32_t> prompt,
       const GenerateOptions& opt, const TokenCallback& on_token)
      : model_(model),
        vocab_(vocab),
        prompt_(prompt),
        opt_(opt),
        on_token_(on_token),
        sampler_(opt.sampler, opt.penalties),
        splitter_(opt.think),
        stop_(opt.stop),
        decoder_(borrow(vocab), DecodeOptions{.skip_special = true}),
        constraint_(opt.constraint) {
    validate();
    eos_ = opt.eos_ids.empty()
               ? std::vector<std::uint32_t>(vocab.eos_ids().begin(), vocab.eos_ids().end())
               : opt.eos_ids;
    if (constraint_ != nullptr) {
      mask_.resize(bitmask_words(model.logits_width()));
      think_reported_open_ = !splitter_.in_content();
      constraint_->set_think_open(think_reported_open_);
    }
    context_.assign(prompt.begin(), prompt.end());
  }

  GenerateResult run() {
    const auto t0 = Clock::now();
    model_.enqueue(prompt_);
    if (device_pick_mode()) {
      result_.stats.prefill_seconds = seconds_since(t0);  // queued, not waited for
      const auto t1 = Clock::now();
      run_device_pick();
      result_.stats.decode_seconds = seconds_since(t1);
    } else {
      const LogitsView row = wait();
      result_.stats.prefill_seconds = seconds_since(t0);
      const auto t1 = Clock::now();
      if (opt_.speculative.drafter != nullptr) {
        run_speculative(row);
      } else {
        run_host(row);
      }
      result_.stats.decode_seconds = seconds_since(t1);
    }
    // The context ends with every token but the last, whatever the drive
    // (queued work past it is dropped): a next turn feeds the last token.
    const size_t keep = prompt_.size() + result_.tokens.size() - 1;
    if (model_.context_length() > keep) model_.truncate(keep);
    return std::move(result_);
  }

 private:
  void validate() const {
    if (prompt_.empty()) throw Error(ErrorCode::kInvalidArgument, "prompt", "the prompt is empty");
    if (opt_.max_tokens == 0) {
      throw Error(ErrorCode::kInvalidArgument, "max_tokens", "max_tokens must be at least 1");
    }
    if (!vocab_.fits_logits_width(model_.logits_width())) {
      throw Error(ErrorCode::kShapeMismatch, "model",
                  "the model's logits row is narrower than the vocabulary");
    }
    const auto& spec = opt_.speculative;
    if (spec.drafter != nullptr) {
      if (spec.max_draft < 1 || spec.max_draft > 64) {
        throw Error(ErrorCode::kInvalidArgument, "speculative",
                    "speculative.max_draft must be in [1, 64]");
      }
      if (opt_.sampler.sampling_active() && !spec.stochastic) {
        throw Error(ErrorCode::kInvalidArgument, "speculative",
                    "temperature > 0 with speculative decoding needs stochastic verification "
                    "(speculative.stochastic)");
      }
    }
    if (opt_.think.enabled && opt_.think.budget && !vocab_.find(opt_.think.close)) {
      throw Error(ErrorCode::kInvalidArgument, "thinking_budget",
                  "the vocabulary has no single token for \"" + opt_.think.close + "\"");
    }
  }

  bool device_pick_mode() const {
    return model_.can_pick_on_device() && !opt_.sampler.sampling_active() &&
           !opt_.penalties.penalties_active() && opt_.sampler.top_logprobs_k == 0 &&
           constraint_ == nullptr && opt_.speculative.drafter == nullptr;
  }

  bool is_eos(std::int32_t token) const {
    for (std::uint32_t e : eos_) {
      if (static_cast<std::int64_t>(e) == token) return true;
    }
    return false;
  }

  bool at_last_token() const { return result_.tokens.size() + 1 >= opt_.max_tokens; }

  LogitsView wait() {
    const auto t0 = Clock::now();
    LogitsView row = model_.logits();
    result_.stats.wait_seconds += seconds_since(t0);
    return row;
  }

  // ---- constraint -----------------------------------------------------------

  std::span<const std::uint32_t> current_mask() {
    if (constraint_ == nullptr || !constraint_->wants_mask()) return {};
    if (!mask_valid_) {
      const auto t0 = Clock::now();
      constraint_->step_mask(mask_);
      result_.stats.constraint_seconds += seconds_since(t0);
      mask_valid_ = true;
    }
    return mask_;
  }

  // The next step's mask, computed now while the model runs.
  void prepare_mask() {
    if (opt_.overlap_mask) current_mask();
  }

  void advance_constraint(std::int32_t token) {
    if (constraint_ == nullptr) return;
    const auto t0 = Clock::now();
    constraint_->advance(static_cast<std::uint32_t>(token));
    mask_valid_ = false;
    result_.stats.constraint_seconds += seconds_since(t0);
  }

  // Drops draft tokens from the first one the constraint refuses; the
  // constraint is rolled back to where it was.
  size_t constraint_prefix(std::span<const std::int32_t> draft) {
    if (constraint_ == nullptr || !constraint_->wants_mask()) return draft.size();
    const auto t0 = Clock::now();
    size_t n = 0;
    for (; n < draft.size(); ++n) {
      try {
        constraint_->advance(static_cast<std::uint32_t>(draft[n]));
      } catch (const Error&) {
        break;
      }
    }
    constraint_->rollback(n);
    result_.stats.constraint_seconds += seconds_since(t0);
    return n;
  }

  // ---- choosing -------------------------------------------------------------

  Chosen choose(const LogitsView& row) {
    const auto mask = current_mask();
    const auto t0 = Clock::now();
    StepResult r = sampler_.next(row, mask);
    result_.stats.sampler_seconds += seconds_since(t0);
    advance_constraint(r.token);
    return {r.token, std::move(r.logprobs)};
  }

  // Verifies one draft token with the stochastic acceptance rule.
  Chosen choose_against_draft(const LogitsView& row, std::int32_t draft, const Distribution* q) {
    const auto mask = current_mask();
    const auto t0 = Clock::now();
    const Distribution p = sampler_.distribution(row, mask);
    const Acceptance a = accept_draft_token(p, q, draft, sampler_.rng());
    sampler_.accept(a.token);
    Chosen c{a.token, std::nullopt};
    if (opt_.sampler.top_logprobs_k > 0) {
      c.logprobs = compute_top_logprobs(row, a.token, opt_.sampler.top_logprobs_k);
    }
    result_.stats.sampler_seconds += seconds_since(t0);
    advance_constraint(a.token);
    return c;
  }

  Chosen forced_close() {
    const auto id = static_cast<std::int32_t>(*vocab_.find(opt_.think.close));
    sampler_.accept(id);
    advance_constraint(id);
    ++result_.stats.forced;
    return {id, std::nullopt, true};
  }

  // ---- emission ---------------------------------------------------------------

  void route(std::string_view text, TokenEvent& ev, bool at_end) {
    routed_.clear();
    splitter_.push(text, routed_);
    if (at_end) splitter_.flush(routed_);
    ev.reasoning = routed_.reasoning;
    ev.content = stop_.push(routed_.content);
    if (at_end && !stop_.matched()) ev.content += stop_.flush();
  }

  // Delivers one token. True when the output has finished.
  bool emit(const Chosen& c) {
    result_.tokens.push_back(c.token);
    context_.push_back(c.token);
    if (opt_.sampler.top_logprobs_k > 0) result_.logprobs.push_back(c.logprobs);
    TokenEvent ev;
    ev.token = c.token;
    ev.forced = c.forced;
    ev.drafted = c.drafted;
    ev.logprobs = c.logprobs ? &*c.logprobs : nullptr;
    const bool was_think = splitter_.in_think();
    const bool eos = is_eos(c.token);
    const bool last = eos || result_.tokens.size() >= opt_.max_tokens;
    std::string text = eos ? std::string() : decoder_.push(static_cast<std::uint32_t>(c.token));
    if (last) text += decoder_.flush();
    route(text, ev, last);
    ev.channel = was_think || splitter_.in_think() ? Channel::kReasoning : Channel::kContent;
    bool finished = last;
    if (eos) {
      result_.finish = FinishReason::kStop;
    } else if (stop_.matched()) {
      result_.finish = FinishReason::kStop;
      result_.stop_string = stop_.matched_string();
      finished = true;
    } else if (last) {
      result_.finish = FinishReason::kLength;
    }
    result_.reasoning += ev.reasoning;
    result_.content += ev.content;
    if (think_reported_open_ && splitter_.in_content()) {
      think_reported_open_ = false;
      constraint_->set_think_open(false);
      mask_valid_ = false;
    }
    if (on_token_ && !on_token_(ev) && !finished) {
      result_.finish = FinishReason::kCancelled;
      finished = true;
    }
    return finished;
  }

  // ---- drivers ------------------------------------------------------------------

  void run_host(LogitsView row) {
    Chosen c = choose(row);
    for (;;) {
      const bool feed = !is_eos(c.token) && !at_last_token();
      if (feed) {
        model_.enqueue(std::span(&c.token, 1));
        ++result_.stats.steps;
      }
      // The model runs step t+1 while token t is emitted and the next mask built.
      if (emit(c)) return;
      if (splitter_.take_force_close()) {
        wait();  // the step over token t is kept; its successor is never chosen
        ++result_.stats.discarded_successors;
        c = forced_close();
        continue;
      }
      prepare_mask();
      row = wait();
      c = choose(row);
    }
  }

  void run_device_pick() {
    model_.enqueue_pick();
    std::optional<Chosen> host_pending;
    for (;;) {
      Chosen c;
      if (host_pending) {
        c = std::move(*host_pending);
        host_pending.reset();
      } else {
        // Queue the step over the pick and the successor's pick before the
        // host reads the pick.
        if (!at_last_token()) {
          model_.enqueue_step_on_pick();
          model_.enqueue_pick();
          ++result_.stats.steps;
        }
        const auto t0 = Clock::now();
        c.token = model_.read_pick();
        result_.stats.wait_seconds += seconds_since(t0);
      }
      if (emit(c)) return;
      if (splitter_.take_force_close()) {
        model_.read_pick();  // the pipelined successor
        ++result_.stats.discarded_successors;
        host_pending = forced_close();
        if (!at_last_token()) {
          model_.enqueue(std::span(&host_pending->token, 1));
          model_.enqueue_pick();
          ++result_.stats.steps;
        }
      }
    }
  }

  void run_speculative(LogitsView row) {
    Drafter& drafter = *opt_.speculative.drafter;
    Chosen c = choose(row);
    for (;;) {
      if (emit(c)) return;
      if (splitter_.take_force_close()) {
        model_.enqueue(std::span(&c.token, 1));
        ++result_.stats.steps;
        wait();  // the step over token t is kept; its successor is never chosen
        ++result_.stats.discarded_successors;
        c = forced_close();
        continue;
      }
      // Accepted drafts plus the correction or bonus token must fit.
      const size_t room = opt_.max_tokens - result_.tokens.size();
      const size_t k = std::min<size_t>(opt_.speculative.max_draft, room - 1);
      draft_.clear();
      if (k > 0 && !is_eos(c.token)) drafter.propose(context_, k, draft_);
      if (draft_.tokens.size() > k) draft_.tokens.resize(k);
      const size_t j = constraint_prefix(draft_.tokens);
      const size_t base = model_.context_length();
      batch_.assign(1, c.token);
      batch_.insert(batch_.end(), draft_.tokens.begin(),
                    draft_.tokens.begin() + static_cast<long>(j));
      model_.enqueue(batch_, j > 0);
      ++result_.stats.steps;
      result_.stats.drafted += j;
      prepare_mask();
      const LogitsView rows = wait();
      if (j == 0) {
        c = choose(rows);
        continue;
      }
      bool finished = false, replaced = false;
      for (size_t i = 0; i < j && !replaced; ++i) {
        const std::int32_t d = draft_.tokens[i];
        const Distribution* q = i < draft_.probs.size() ? &draft_.probs[i] : nullptr;
        Chosen t = opt_.sampler.sampling_active()
                       ? choose_against_draft(rows.row(static_cast<std::int64_t>(i)), d, q)
                       : choose(rows.row(static_cast<std::int64_t>(i)));
        if (t.token != d) {  // the correction token; the rest of the draft is dropped
          model_.truncate(base + 1 + i);
          c = std::move(t);
          replaced = true;
          break;
        }
        ++result_.stats.accepted;
        t.drafted = true;
        if (emit(t)) {
          finished = true;
          break;
        }
        if (splitter_.take_force_close()) {
          model_.truncate(base + 2 + i);
          ++result_.stats.discarded_successors;
          c = forced_close();
          replaced = true;
        }
      }
      if (finished) return;
      if (!replaced) c = choose(rows.row(static_cast<std::int64_t>(j)));  // the bonus token
    }
  }

  Model& model_;
  const Vocabulary& vocab_;
  std::span<const std::int32_t> prompt_;
  const GenerateOptions& opt_;
  const TokenCallback& on_token_;
  Sampler sampler_;
  ThinkSplitter splitter_;
  ThinkSplitter::Routed routed_;
  decode::StopStrings stop_;
  StreamDecoder decoder_;
  ConstraintEngine* constraint_;
  std::vector<std::uint32_t> eos_;
  std::vector<std::uint32_t> mask_;
  bool mask_valid_ = false;
  bool think_reported_open_ = false;
  std::vector<std::int32_t> context_;
  std::vector<std::int32_t> batch_;
  Draft draft_;
  GenerateResult result_;
};

}  // namespace

const char* finish_reason_name(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "?";
}

namespace {
[[noreturn]] void no_device_pick() {
  throw Error(ErrorCode::kUnsupported, "model", "this model cannot pick tokens on its device");
}
}  // namespace

void Model::enqueue_pick() {
  no_device_pick();
}
void Model::enqueue_step_on_pick() {
  no_device_pick();
}
std::int32_t Model::read_pick() {
  no_device_pick();
}

GenerateResult generate(Model& model, const Vocabulary& vocab, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options, const TokenCallback& on_token) {
  return Loop(model, vocab, prompt, options, on_token).run();
}

}  // namespace nextok
