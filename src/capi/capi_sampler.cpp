// C API: sampler handles (config translation, sample, logprobs, accept, reset).
#include <cstring>
#include <string>

#include "capi/capi_internal.hpp"
#include "nextok/mask.hpp"

using nextok::Error;
using nextok::ErrorCode;
using nextok::capi::guarded;
using nextok::capi::require;

namespace {

// The first published layout; a caller's struct may be this size or larger
// (a newer header whose extra fields are all zero).
constexpr size_t kConfigV1Size = sizeof(nextok_sampler_config);

// A caller's struct of any supported size, read as this build's layout.
nextok_sampler_config read_config(const nextok_sampler_config* cfg) {
  require(cfg, "cfg");
  const size_t size = cfg->struct_size;
  if (size < kConfigV1Size) {
    throw Error(ErrorCode::kInvalidArgument, "struct_size",
                "nextok_sampler_config.struct_size is " + std::to_string(size) +
                    "; call nextok_sampler_config_default first");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(cfg);
  for (size_t i = sizeof(nextok_sampler_config); i < size; ++i) {
    if (bytes[i] != 0) {
      throw Error(ErrorCode::kUnsupported, "struct_size",
                  "nextok_sampler_config sets fields this library version does not know");
    }
  }
  return *cfg;
}

nextok::FilterOrder filter_order_of(int32_t order) {
  switch (order) {
    case NEXTOK_FILTER_ORDER_SPEC:
      return nextok::FilterOrder::kSpec;
    case NEXTOK_FILTER_ORDER_MLX_LM:
      return nextok::FilterOrder::kMlxLm;
    case NEXTOK_FILTER_ORDER_TOP_K_FIRST:
      return nextok::FilterOrder::kTopKFirst;
    default:
      throw Error(ErrorCode::kInvalidArgument, "filter_order",
                  "unknown filter_order " + std::to_string(order));
  }
}

void check_row(const nextok_sampler* s, const float* logits, size_t n, const uint32_t* mask,
               size_t mask_words) {
  require(logits, "logits");
  if (n == 0) throw Error(ErrorCode::kInvalidArgument, "n", "the logits row is empty");
  if (s->vocab_size != 0 && n != s->vocab_size) {
    throw Error(ErrorCode::kShapeMismatch, "n",
                "logits row has " + std::to_string(n) + " entries; the sampler was made for " +
                    std::to_string(s->vocab_size));
  }
  if (mask != nullptr && mask_words != nextok::bitmask_words(n)) {
    throw Error(ErrorCode::kMaskSizeMismatch, "mask_words",
                "mask has " + std::to_string(mask_words) + " words; " + std::to_string(n) +
                    " logits need " + std::to_string(nextok::bitmask_words(n)));
  }
}

nextok::StepResult step(nextok_sampler* s, const float* logits, size_t n, const uint32_t* mask,
                        size_t mask_words) {
  check_row(s, logits, n, mask, mask_words);
  const auto row = nextok::LogitsView::f32(std::span<const float>(logits, n));
  const std::span<const uint32_t> words =
      mask == nullptr ? std::span<const uint32_t>() : std::span<const uint32_t>(mask, mask_words);
  return s->sampler->next(row, words);
}

}  // namespace

extern "C" {

void nextok_sampler_config_default(nextok_sampler_config* cfg) {
  if (cfg == nullptr) return;
  const nextok::SamplerConfig c;
  const nextok::PenaltyConfig p;
  std::memset(cfg, 0, sizeof(*cfg));
  cfg->struct_size = sizeof(*cfg);
  cfg->temperature = c.temperature;
  cfg->top_p = c.top_p;
  cfg->top_k = c.top_k;
  cfg->min_p = c.min_p;
  cfg->seed = c.seed_or_default();
  cfg->top_logprobs_k = c.top_logprobs_k;
  cfg->filter_order = NEXTOK_FILTER_ORDER_SPEC;
  cfg->repetition_penalty = p.repetition_penalty;
  cfg->presence_penalty = p.presence_penalty;
  cfg->frequency_penalty = p.frequency_penalty;
  cfg->penalty_window = p.window;
}

nextok_status nextok_sampler_new(const nextok_sampler_config* cfg, size_t vocab_size,
                                 nextok_sampler** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    const nextok_sampler_config c = read_config(cfg);
    auto s = std::make_unique<nextok_sampler>();
    s->config.temperature = c.temperature;
    s->config.top_p = c.top_p;
    s->config.top_k = c.top_k;
    s->config.min_p = c.min_p;
    s->config.seed = c.seed;
    s->config.top_logprobs_k = c.top_logprobs_k;
    s->config.filter_order = filter_order_of(c.filter_order);
    s->penalties.repetition_penalty = c.repetition_penalty;
    s->penalties.presence_penalty = c.presence_penalty;
    s->penalties.frequency_penalty = c.frequency_penalty;
    s->penalties.window = c.penalty_window;
    if (c.logit_bias_count > 0) {
      require(c.logit_bias_tokens, "logit_bias_tokens");
      require(c.logit_bias_values, "logit_bias_values");
      s->penalties.logit_bias.reserve(c.logit_bias_count);
      for (size_t i = 0; i < c.logit_bias_count; ++i)
        s->penalties.logit_bias.emplace_back(c.logit_bias_tokens[i], c.logit_bias_values[i]);
    }
    s->vocab_size = vocab_size;
    s->sampler = std::make_unique<nextok::Sampler>(s->config, s->penalties);  // validates
    *out = s.release();
    return NEXTOK_OK;
  });
}

void nextok_sampler_free(nextok_sampler* s) {
  delete s;
}

nextok_status nextok_sampler_sample(nextok_sampler* s, const float* logits, size_t n,
                                    const uint32_t* mask, size_t mask_words, uint32_t* token_out) {
  return guarded([&] {
    require(s, "s");
    require(token_out, "token_out");
    *token_out = static_cast<uint32_t>(step(s, logits, n, mask, mask_words).token);
    return NEXTOK_OK;
  });
}

nextok_status nextok_sampler_sample_logprobs(nextok_sampler* s, const float* logits, size_t n,
                                             const uint32_t* mask, size_t mask_words,
                                             uint32_t* token_out, float* token_logprob,
                                             nextok_token_logprob* top, size_t top_cap,
                                             size_t* top_n) {
  return guarded([&] {
    require(s, "s");
    require(token_out, "token_out");
    require(token_logprob, "token_logprob");
    require(top_n, "top_n");
    const uint32_t k = s->config.top_logprobs_k;
    if (k == 0) {
      throw Error(ErrorCode::kInvalidArgument, "top_logprobs_k",
                  "the sampler was made with top_logprobs_k = 0");
    }
    if (top_cap < k) {
      throw Error(
          ErrorCode::kInvalidArgument, "top_cap",
          "top_cap " + std::to_string(top_cap) + " is below top_logprobs_k " + std::to_string(k));
    }
    require(top, "top");
    const nextok::StepResult r = step(s, logits, n, mask, mask_words);
    *token_out = static_cast<uint32_t>(r.token);
    *token_logprob = r.logprobs->token_logprob;
    *top_n = r.logprobs->top.size();
    for (size_t i = 0; i < r.logprobs->top.size(); ++i)
      top[i] = {r.logprobs->top[i].token_id, r.logprobs->top[i].logprob};
    return NEXTOK_OK;
  });
}

nextok_status nextok_sampler_accept(nextok_sampler* s, uint32_t token) {
  return guarded([&] {
    require(s, "s");
    const size_t limit = s->vocab_size != 0 ? s->vocab_size : size_t{INT32_MAX} + 1;
    if (token >= limit) {
      throw Error(ErrorCode::kInvalidArgument, "token",
                  "token " + std::to_string(token) + " is outside the vocabulary (size " +
                      std::to_string(limit) + ")");
    }
    s->sampler->accept(static_cast<int32_t>(token));
    return NEXTOK_OK;
  });
}

nextok_status nextok_sampler_reset(nextok_sampler* s) {
  return guarded([&] {
    require(s, "s");
    s->sampler = std::make_unique<nextok::Sampler>(s->config, s->penalties);
    return NEXTOK_OK;
  });
}

}  // extern "C"
