// The Llama forward pass on the CPU (docs/model.md): embedding, per layer
// RMSNorm → GQA attention with RoPE and an fp16 KV cache → RMSNorm → SwiGLU,
// then the output norm and the (tied or untied) output matrix.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/cpu/attention_kernels.hpp"
#include "model/cpu/matmul.hpp"
#include "model/cpu/ops.hpp"
#include "model/cpu/quant.hpp"
#include "model/llama/llama_weights.hpp"
#include "nextok/error.hpp"
#include "nextok/llama.hpp"

namespace nextok {

using model::Matmul;
using model::ThreadPool;

// One sequence's state: its fp16 KV cache per layer ([position][n_head_kv *
// head_dim]), its length and the logits of its last step.
struct LlamaSequenceState {
  std::vector<std::vector<std::uint16_t>> k_cache, v_cache;
  std::size_t n_past = 0;
  std::vector<float> logits;
  std::int64_t logits_rows = 0;
  bool in_use = false;

  void reserve(std::size_t positions, std::size_t kv, std::size_t max_context) {
    if (k_cache[0].size() >= positions * kv) return;
    std::size_t cap = std::max<std::size_t>(256, k_cache[0].size() / kv);
    while (cap < positions) cap *= 2;
    cap = std::min<std::size_t>(cap, max_context);
    for (std::size_t l = 0; l < k_cache.size(); ++l) {
      k_cache[l].resize(cap * kv);
      v_cache[l].resize(cap * kv);
    }
  }
};

// A row of a step: which sequence it extends and at which position.
struct LlamaStepRow {
  LlamaSequenceState* seq;
  std::size_t pos;
};

struct LlamaModel::Impl {
  GgufFile file;
  Tokenizer tokenizer;
  model::LlamaWeights w;
  std::uint32_t max_context = 0;
  ThreadPool pool;
  Matmul mm;

  // LlamaSequenceState 0 is the one the Model interface drives.
  std::vector<std::unique_ptr<LlamaSequenceState>> seqs;

  // Scratch for a step of T rows.
  std::vector<float> x, xn, q, k, v, attn, tmp, gate, up, scores;
  std::vector<float> qround;
  std::vector<std::uint16_t> q16;
  std::vector<float> lanes;
  std::vector<float> logits;
  std::vector<LlamaStepRow> rows;

  Impl(GgufFile f, Tokenizer t, model::LlamaWeights weights, const LlamaOptions& opt)
      : file(std::move(f)), tokenizer(std::move(t)), w(std::move(weights)), pool(opt.threads) {
    const auto& c = w.config;
    max_context =
        opt.max_context != 0 ? std::min(opt.max_context, c.context_length) : c.context_length;
    add_sequence();
  }

  std::size_t add_sequence() {
    for (std::size_t i = 1; i < seqs.size(); ++i) {
      if (!seqs[i]->in_use) {
        seqs[i]->in_use = true;
        seqs[i]->n_past = 0;
        seqs[i]->logits_rows = 0;
        return i;
      }
    }
    auto s = std::make_unique<LlamaSequenceState>();
    s->k_cache.resize(w.config.n_layers);
    s->v_cache.resize(w.config.n_layers);
    s->in_use = true;
    seqs.push_back(std::move(s));
    return seqs.size() - 1;
  }
  LlamaSequenceState& seq(std::size_t id) {
    if (id >= seqs.size() || !seqs[id]->in_use) {
      throw Error(ErrorCode::kInvalidArgument, "sequence", "no sequence " + std::to_string(id));
    }
    return *seqs[id];
  }
  void check(const LlamaSequenceState& s, std::span<const std::int32_t> tokens) const {
    if (tokens.empty()) throw Error(ErrorCode::kInvalidArgument, "tokens", "a step needs tokens");
    if (s.n_past + tokens.size() > max_context) {
      throw Error(ErrorCode::kInvalidArgument, "max_tokens",
                  "the context would exceed " + std::to_string(max_context) + " tokens");
    }
    for (std::int32_t t : tokens) {
      if (t < 0 || static_cast<std::size_t>(t) >= w.token_embd.rows) {
        throw Error(ErrorCode::kInvalidArgument, "tokens",
                    "token id " + std::to_string(t) + " is outside the model's vocabulary");
      }
    }
  }

  // Tokens of one sequence (a prompt, a verification step or one token).
  void step(LlamaSequenceState& s, std::span<const std::int32_t> tokens, bool all_logits) {
    rows.clear();
    for (std::size_t t = 0; t < tokens.size(); ++t) rows.push_back({&s, s.n_past + t});
    forward(tokens, tokens.size() == 1 || all_logits, all_logits ? 0 : tokens.size() - 1);
    s.n_past += tokens.size();
    const std::size_t n = all_logits ? tokens.size() : 1;
    s.logits.swap(logits);  // forward() computed exactly the n rows asked for
    s.logits_rows = static_cast<std::int64_t>(n);
  }
  // One token for each of several sequences, in one pass over the weights.
  void step_batch(std::span<LlamaSequenceState* const> batch,
                  std::span<const std::int32_t> tokens) {
    rows.clear();
    for (LlamaSequenceState* s : batch) rows.push_back({s, s->n_past});
    forward(tokens, true, 0);
    const std::size_t V = w.output.rows;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      LlamaSequenceState& s = *batch[i];
      s.n_past += 1;
      s.logits.assign(logits.begin() + static_cast<std::ptrdiff_t>(i * V),
                      logits.begin() + static_cast<std::ptrdiff_t>((i + 1) * V));
      s.logits_rows = 1;
    }
  }

  void forward(std::span<const std::int32_t> tokens, bool per_row, std::size_t first_logit_row);
  void attention(std::size_t layer, std::size_t n_tok, bool per_row);
};

// Runs `rows` (token t extends rows[t].seq at rows[t].pos). Every matmul row
// and every attention row depends only on its own token and sequence, so a
// row's result is the same in any batch.
void LlamaModel::Impl::forward(std::span<const std::int32_t> tokens, bool per_row,
                               std::size_t first) {
  const auto& c = w.config;
  const std::size_t T = tokens.size(), D = c.n_embd, HD = c.head_dim;
  const std::size_t KV = std::size_t{c.n_head_kv} * HD, F = c.n_ff;
  x.resize(T * D);
  xn.resize(T * D);
  q.resize(T * D);
  k.resize(T * KV);
  v.resize(T * KV);
  attn.resize(T * D);
  tmp.resize(T * D);
  gate.resize(T * F);
  up.resize(T * F);
  for (std::size_t t = 0; t < T; ++t) {
    model::dequantize_row(w.token_embd.type, w.token_embd.row(static_cast<std::size_t>(tokens[t])),
                          x.data() + t * D, D);
    rows[t].seq->reserve(rows[t].pos + 1, KV, max_context);
  }
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const auto& L = w.layers[l];
    for (std::size_t t = 0; t < T; ++t) {
      model::rms_norm(x.data() + t * D, L.attn_norm, xn.data() + t * D, D, c.rms_eps);
    }
    mm(L.wq, xn.data(), T, q.data(), pool);
    mm(L.wk, xn.data(), T, k.data(), pool);
    mm(L.wv, xn.data(), T, v.data(), pool);
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t pos = rows[t].pos;
      model::rope(q.data() + t * D, c.n_head, HD, c.rope_dims, pos, c.rope_freq_base);
      model::rope(k.data() + t * KV, c.n_head_kv, HD, c.rope_dims, pos, c.rope_freq_base);
      std::uint16_t* kc = rows[t].seq->k_cache[l].data() + pos * KV;
      std::uint16_t* vc = rows[t].seq->v_cache[l].data() + pos * KV;
      for (std::size_t i = 0; i < KV; ++i) {
        kc[i] = model::f32_to_fp16(k[t * KV + i]);
        vc[i] = model::f32_to_fp16(v[t * KV + i]);
      }
    }
    attention(l, T, per_row);
    mm(L.wo, attn.data(), T, tmp.data(), pool);
    for (std::size_t i = 0; i < T * D; ++i) x[i] += tmp[i];
    for (std::size_t t = 0; t < T; ++t) {
      model::rms_norm(x.data() + t * D, L.ffn_norm, xn.data() + t * D, D, c.rms_eps);
    }
    mm(L.w_gate, xn.data(), T, gate.data(), pool);
    mm(L.w_up, xn.data(), T, up.data(), pool);
    model::swiglu(gate.data(), up.data(), T * F);
    mm(L.w_down, gate.data(), T, tmp.data(), pool);
    for (std::size_t i = 0; i < T * D; ++i) x[i] += tmp[i];
  }
  // Only the rows asked for go through the (large) output matrix.
  const std::size_t n_out = T - first;
  for (std::size_t t = first; t < T; ++t) {
    model::rms_norm(x.data() + t * D, w.output_norm, xn.data() + (t - first) * D, D, c.rms_eps);
  }
  logits.resize(n_out * w.output.rows);
  mm(w.output, xn.data(), n_out, logits.data(), pool);
}

// Causal GQA attention for the T new tokens, heads split across threads.
// Bit for bit as llama.cpp's CPU path without flash attention: q and the
// softmax weights are rounded to fp16 for their products with the fp16
// cache; a prompt batch sums those products as its F16 GEMM does (8 FMA
// lanes, then pairwise), a single token as its vector dot (32 FMA lanes, then
// ggml's reduction). Verification steps (all rows wanted) take the per-token
// order, so speculative decoding reproduces plain decoding exactly. Position
// j of the weighted sum of values takes lane j % lanes.
void LlamaModel::Impl::attention(std::size_t layer, std::size_t T, bool per_row) {
  const auto& c = w.config;
  const std::size_t HD = c.head_dim, KV = std::size_t{c.n_head_kv} * HD, D = c.n_embd;
  const std::size_t group = c.n_head / c.n_head_kv;
  std::size_t n_ctx = 0;
  for (std::size_t t = 0; t < T; ++t) n_ctx = std::max(n_ctx, rows[t].pos + 1);
  const float scale = 1.0f / std::sqrt(static_cast<float>(HD));
  const unsigned threads = pool.size();
  const bool single = per_row;
  const std::size_t n_lanes = single ? 32 : 8;
  // A prompt batch takes a job per (token, KV head): the heads sharing that
  // KV head are dotted with each cached key at once. A single-token step
  // (32-lane order) takes a job per (token, head).
  const std::size_t per_job = single ? 1 : group;
  const std::size_t jobs = T * c.n_head / per_job;
  scores.resize(threads * per_job * n_ctx);
  qround.resize(threads * per_job * HD);
  q16.resize(threads * HD);
  lanes.resize(threads * per_job * n_lanes * HD);
  const model::AttentionKernels& ak = model::attention_kernels();
  pool.run([&](unsigned ti) {
    float* s0 = scores.data() + ti * per_job * n_ctx;
    float* qf = qround.data() + ti * per_job * HD;
    std::uint16_t* qh = q16.data() + ti * HD;
    float* acc = lanes.data() + ti * per_job * n_lanes * HD;
    // Jobs dealt round-robin: causal rows grow with t, so contiguous ranges
    // would leave the thread with the early rows idle.
    for (std::size_t job = ti; job < jobs; job += threads) {
      const std::size_t heads_per_t = c.n_head / per_job;
      const std::size_t t = job / heads_per_t, h0 = job % heads_per_t * per_job, g = h0 / group;
      const std::size_t visible = rows[t].pos + 1;
      const std::uint16_t* kc = rows[t].seq->k_cache[layer].data();
      const std::uint16_t* vc = rows[t].seq->v_cache[layer].data();
      for (std::size_t r = 0; r < per_job; ++r) {
        const float* qv = q.data() + t * D + (h0 + r) * HD;
        for (std::size_t i = 0; i < HD; ++i) {
          qh[i] = model::f32_to_fp16(qv[i]);
          qf[r * HD + i] = model::fp16_to_f32(qh[i]);
        }
      }
      if (single) {
        for (std::size_t j = 0; j < visible; ++j) {
          s0[j] = model::dot_f16_f16(HD, kc + j * KV + g * HD, qh);
        }
      } else {
        ak.dots_f16_lanes8_multi(HD, kc + g * HD, KV, visible, qf, per_job, s0, n_ctx);
      }
      for (std::size_t r = 0; r < per_job; ++r) {
        model::softmax(s0 + r * n_ctx, visible, scale);
        ak.round_f16(s0 + r * n_ctx, visible);
      }
      ak.weighted_sum_f16_multi(HD, s0, n_ctx, per_job, vc + g * HD, KV, visible, n_lanes, acc);
      for (std::size_t r = 0; r < per_job; ++r) {
        const float* a = acc + r * n_lanes * HD;
        float* out = attn.data() + t * D + (h0 + r) * HD;
        for (std::size_t i = 0; i < HD; ++i) {
          out[i] = single ? model::reduce_lanes32(a + i, HD) : model::reduce_lanes8(a + i, HD);
        }
      }
    }
  });
}

LlamaModel::LlamaModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LlamaModel::~LlamaModel() = default;

std::unique_ptr<LlamaModel> LlamaModel::load(const std::filesystem::path& path,
                                             const LlamaOptions& options) {
  GgufFile file = GgufFile::open(path);
  model::LlamaWeights weights = model::LlamaWeights::from(file);
  Tokenizer tok = Tokenizer::from_gguf(file);
  if (tok.vocab().size() > weights.output.rows) {
    throw Error(ErrorCode::kMalformedFile, "model",
                file.name() + ": the vocabulary has more ids than the output matrix has rows");
  }
  auto impl = std::make_unique<Impl>(std::move(file), std::move(tok), std::move(weights), options);
  return std::unique_ptr<LlamaModel>(new LlamaModel(std::move(impl)));
}

const LlamaConfig& LlamaModel::config() const noexcept {
  return impl_->w.config;
}
const Tokenizer& LlamaModel::tokenizer() const noexcept {
  return impl_->tokenizer;
}
const GgufFile& LlamaModel::gguf() const noexcept {
  return impl_->file;
}
unsigned LlamaModel::threads() const noexcept {
  return impl_->pool.size();
}
std::size_t LlamaModel::logits_width() const {
  return impl_->w.output.rows;
}
std::size_t LlamaModel::context_length() const {
  return impl_->seqs[0]->n_past;
}

void LlamaModel::enqueue(std::span<const std::int32_t> tokens, bool all_logits) {
  LlamaSequenceState& s = *impl_->seqs[0];
  impl_->check(s, tokens);
  impl_->step(s, tokens, all_logits);
}

LogitsView LlamaModel::logits() {
  return sequence_logits(0);
}

void LlamaModel::truncate(std::size_t length) {
  truncate_sequence(0, length);
}

std::size_t LlamaModel::add_sequence() {
  return impl_->add_sequence();
}

void LlamaModel::remove_sequence(std::size_t id) {
  if (id == 0) throw Error(ErrorCode::kInvalidArgument, "sequence", "sequence 0 stays");
  impl_->seq(id).in_use = false;
}

std::size_t LlamaModel::sequence_length(std::size_t id) const {
  return impl_->seq(id).n_past;
}

void LlamaModel::step(std::size_t id, std::span<const std::int32_t> tokens, bool all_logits) {
  LlamaSequenceState& s = impl_->seq(id);
  impl_->check(s, tokens);
  impl_->step(s, tokens, all_logits);
}

void LlamaModel::step_batch(std::span<const std::size_t> ids,
                            std::span<const std::int32_t> tokens) {
  if (ids.size() != tokens.size() || ids.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "tokens", "one token per sequence");
  }
  std::vector<LlamaSequenceState*> batch;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    LlamaSequenceState& s = impl_->seq(ids[i]);
    if (std::find(batch.begin(), batch.end(), &s) != batch.end()) {
      throw Error(ErrorCode::kInvalidArgument, "sequence", "a sequence appears twice in a batch");
    }
    impl_->check(s, tokens.subspan(i, 1));
    batch.push_back(&s);
  }
  impl_->step_batch(batch, tokens);
}

LogitsView LlamaModel::sequence_logits(std::size_t id) {
  LlamaSequenceState& s = impl_->seq(id);
  if (s.logits_rows == 0) {
    throw Error(ErrorCode::kInvalidArgument, "model", "no step has run yet");
  }
  return LogitsView::f32_rows(s.logits.data(), s.logits_rows,
                              static_cast<std::int64_t>(impl_->w.output.rows));
}

void LlamaModel::truncate_sequence(std::size_t id, std::size_t length) {
  LlamaSequenceState& s = impl_->seq(id);
  if (length > s.n_past) {
    throw Error(ErrorCode::kInvalidArgument, "length", "cannot truncate past the end");
  }
  s.n_past = length;
  s.logits_rows = 0;
}

}  // namespace nextok
