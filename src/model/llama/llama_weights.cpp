#include "model/llama/llama_weights.hpp"

#include "nextok/error.hpp"

namespace nextok::model {

namespace {

[[noreturn]] void bad(const GgufFile& f, const std::string& what) {
  throw Error(ErrorCode::kMalformedFile, "model", f.name() + ": " + what);
}

std::uint32_t get_u32(const GgufFile& f, const std::string& key,
                      std::optional<std::uint32_t> fallback = {}) {
  const auto v = f.get_int(key);
  if (!v) {
    if (fallback) return *fallback;
    bad(f, "missing metadata key " + key);
  }
  if (*v <= 0 || *v > (std::int64_t{1} << 24))
    bad(f, key + " = " + std::to_string(*v) + " is out of range");
  return static_cast<std::uint32_t>(*v);
}

const GgufTensorInfo& tensor(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (t == nullptr) bad(f, "missing tensor " + name);
  return *t;
}

WeightMatrix matrix(const GgufFile& f, const std::string& name, std::uint64_t cols,
                    std::uint64_t rows) {
  const auto& t = tensor(f, name);
  if (t.n_dims != 2 || t.dims[0] != cols || t.dims[1] != rows) {
    bad(f, "tensor " + name + " has shape [" + std::to_string(t.dims[0]) + " x " +
               std::to_string(t.dims[1]) + "], expected [" + std::to_string(cols) + " x " +
               std::to_string(rows) + "]");
  }
  if (!matmul_supports(t.type)) {
    const auto traits = ggml_type_traits(t.type);
    throw Error(ErrorCode::kUnsupported, "model",
                f.name() + ": tensor " + name + " has ggml type " +
                    (traits ? traits->name : std::to_string(t.type)) +
                    "; the runtime computes with F32, F16, Q4_0, Q4_1 and Q8_0");
  }
  WeightMatrix w;
  w.type = t.type;
  w.cols = cols;
  w.rows = rows;
  w.data = t.data;
  w.row_bytes = row_bytes(t.type, cols);
  if (w.row_bytes == 0 || !t.n_bytes || *t.n_bytes != w.row_bytes * rows) {
    bad(f, "tensor " + name + " has an unexpected size");
  }
  return w;
}

const float* vector(const GgufFile& f, const std::string& name, std::uint64_t n) {
  const auto& t = tensor(f, name);
  if (t.type != 0 || t.n_elements != n)
    bad(f, "tensor " + name + " must be F32 of " + std::to_string(n));
  return reinterpret_cast<const float*>(t.data);
}

}  // namespace

LlamaWeights LlamaWeights::from(const GgufFile& f) {
  const auto arch = f.get_string("general.architecture");
  if (!arch) bad(f, "missing general.architecture");
  if (*arch != "llama") {
    throw Error(ErrorCode::kUnsupported, "model",
                f.name() + ": architecture '" + std::string(*arch) +
                    "' is not supported; the runtime runs Llama-architecture models");
  }
  LlamaWeights w;
  LlamaConfig& c = w.config;
  c.name = std::string(f.get_string("general.name").value_or("llama"));
  c.n_layers = get_u32(f, "llama.block_count");
  c.n_embd = get_u32(f, "llama.embedding_length");
  c.n_ff = get_u32(f, "llama.feed_forward_length");
  c.n_head = get_u32(f, "llama.attention.head_count");
  c.n_head_kv = get_u32(f, "llama.attention.head_count_kv", c.n_head);
  c.context_length = get_u32(f, "llama.context_length", 2048);
  if (c.n_embd % c.n_head != 0 || c.n_head % c.n_head_kv != 0) {
    bad(f, "the head counts do not divide the embedding");
  }
  c.head_dim = c.n_embd / c.n_head;
  c.rope_dims = get_u32(f, "llama.rope.dimension_count", c.head_dim);
  if (c.rope_dims > c.head_dim || c.rope_dims % 2 != 0 || c.head_dim > 1024) {
    bad(f, "llama.rope.dimension_count does not fit the head size");
  }
  c.rope_freq_base = static_cast<float>(f.get_float("llama.rope.freq_base").value_or(10000.0));
  c.rms_eps =
      static_cast<float>(f.get_float("llama.attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rope_freq_base > 0.0f) || !(c.rms_eps > 0.0f)) bad(f, "bad rope base or norm epsilon");

  // A named string: GCC 13 takes a reference returned next to a temporary
  // argument for a dangling one (-Wdangling-reference).
  const std::string embd_name = "token_embd.weight";
  const auto& embd = tensor(f, embd_name);
  if (embd.n_dims != 2 || embd.dims[0] != c.n_embd)
    bad(f, "token_embd.weight does not match the embedding size");
  c.n_vocab = static_cast<std::uint32_t>(embd.dims[1]);
  w.token_embd = matrix(f, "token_embd.weight", c.n_embd, c.n_vocab);
  c.tied_output = f.find_tensor("output.weight") == nullptr;
  w.output = c.tied_output ? w.token_embd : matrix(f, "output.weight", c.n_embd, c.n_vocab);
  w.output_norm = vector(f, "output_norm.weight", c.n_embd);
  const std::uint32_t kv = c.n_head_kv * c.head_dim;
  for (std::uint32_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LlamaLayer L;
    L.attn_norm = vector(f, p + "attn_norm.weight", c.n_embd);
    L.ffn_norm = vector(f, p + "ffn_norm.weight", c.n_embd);
    L.wq = matrix(f, p + "attn_q.weight", c.n_embd, c.n_embd);
    L.wk = matrix(f, p + "attn_k.weight", c.n_embd, kv);
    L.wv = matrix(f, p + "attn_v.weight", c.n_embd, kv);
    L.wo = matrix(f, p + "attn_output.weight", c.n_embd, c.n_embd);
    L.w_gate = matrix(f, p + "ffn_gate.weight", c.n_embd, c.n_ff);
    L.w_up = matrix(f, p + "ffn_up.weight", c.n_embd, c.n_ff);
    L.w_down = matrix(f, p + "ffn_down.weight", c.n_ff, c.n_embd);
    w.layers.push_back(L);
  }
  return w;
}

}  // namespace nextok::model
