// A minimal CPU runtime for Llama-architecture GGUF files: the demo and test
// model behind `nextok generate`. It implements nextok::Model, so the decode
// loop drives it like any engine. Not meant to compete with llama.cpp.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "nextok/generate.hpp"
#include "nextok/gguf.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok {

struct LlamaConfig {
  std::string name;
  std::uint32_t n_layers = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  std::uint32_t n_vocab = 0, context_length = 0, rope_dims = 0;
  float rope_freq_base = 10000.0f, rms_eps = 1e-5f;
  bool tied_output = false;  // the output matrix is token_embd
};

struct LlamaOptions {
  unsigned threads = 0;           // 0 = every core
  std::uint32_t max_context = 0;  // 0 = the model's context length
};

class LlamaModel final : public Model {
 public:
  // Throws kIo / kMalformedFile for unreadable or invalid files, and
  // kUnsupported for other architectures or tensor types.
  static std::unique_ptr<LlamaModel> load(const std::filesystem::path& gguf,
                                          const LlamaOptions& options = {});
  ~LlamaModel() override;

  const LlamaConfig& config() const noexcept;
  const Tokenizer& tokenizer() const noexcept;
  const GgufFile& gguf() const noexcept;
  unsigned threads() const noexcept;

  std::size_t logits_width() const override;
  std::size_t context_length() const override;
  // Runs the step at once (the model uses every core itself). Throws
  // kInvalidArgument past max_context or for ids outside the vocabulary.
  // Logits equal llama.cpp's CPU backend bit for bit: a prompt step (several
  // tokens, last row) as its batched path, a one-token step as its decode
  // path. A step with all_logits uses the one-token arithmetic on every row,
  // so verifying a draft gives exactly the rows plain decoding would.
  void enqueue(std::span<const std::int32_t> tokens, bool all_logits = false) override;
  LogitsView logits() override;
  void truncate(std::size_t length) override;

  // Continuous batching: more sequences over the same weights, each with its
  // own KV cache (sequence 0 is the one the Model interface drives). A batch
  // step computes one token for each of several sequences in one pass over
  // the weights; every row depends only on its own sequence, so each
  // sequence's logits are bit for bit those of the same token run alone.
  // Not thread-safe: one thread drives every sequence.
  std::size_t add_sequence();  // reuses removed ids
  void remove_sequence(std::size_t id);
  std::size_t sequence_length(std::size_t id) const;
  // Like enqueue() on sequence `id` (runs at once).
  void step(std::size_t id, std::span<const std::int32_t> tokens, bool all_logits = false);
  // tokens[i] extends sequence ids[i]; ids are distinct.
  void step_batch(std::span<const std::size_t> ids, std::span<const std::int32_t> tokens);
  LogitsView sequence_logits(std::size_t id);
  void truncate_sequence(std::size_t id, std::size_t length);

  struct Impl;

 private:
  explicit LlamaModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nextok
