// The tensors and hyperparameters of a Llama-architecture GGUF file,
// validated once: names, shapes and types the runtime can compute with.
#pragma once
#include <vector>

#include "model/cpu/matmul.hpp"
#include "nextok/gguf.hpp"
#include "nextok/llama.hpp"

namespace nextok::model {

struct LlamaLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  WeightMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
};

struct LlamaWeights {
  LlamaConfig config;
  WeightMatrix token_embd;  // rows = vocabulary, cols = n_embd
  WeightMatrix output;      // token_embd when tied
  const float* output_norm = nullptr;
  std::vector<LlamaLayer> layers;

  // Throws kUnsupported for another architecture or tensor type and
  // kMalformedFile for missing tensors, wrong shapes or bad hyperparameters.
  static LlamaWeights from(const GgufFile& file);
};

}  // namespace nextok::model
