// The CUDA entry points under nextok.sample and apply_token_bitmask_inplace
// for arrays in GPU memory (DLPack: torch CUDA tensors, CuPy arrays). The
// Python side (nextok/_cuda.py) allocates the outputs on the logits' device
// and passes its current stream; here every array is checked (device,
// dtype, shape, layout) and the nextok::cuda::Context of this thread and
// device enqueues the kernels. Nothing synchronises: per-row failures are
// statuses (nextok::cuda::RowStatus), as in the C++ API. In a build without
// CUDA every call raises NextokError (code "unsupported").
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unordered_map.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "nextok/cuda.hpp"
#include "nextok/error.hpp"
#include "nextok/rng.hpp"

namespace nextok::py {

namespace {

[[noreturn]] void bad_value(const char* name, const std::string& what) {
  throw nb::value_error((std::string(name) + " " + what).c_str());
}

// A C-contiguous CUDA array of `ndim` dimensions (1 or 2) on `device`
// (-1: any); rows / cols of -1 are not checked. Returns its data pointer.
template <class A>
void* cuda_data(const A& a, const char* name, int ndim, std::int64_t rows, std::int64_t cols,
                int device) {
  if (a.device_type() != nb::device::cuda::value)
    bad_value(name, "must be on a CUDA device like the logits");
  if (device >= 0 && a.device_id() != device)
    bad_value(name, "is on cuda:" + std::to_string(a.device_id()) +
                        ", the logits on cuda:" + std::to_string(device));
  if (static_cast<int>(a.ndim()) != ndim)
    bad_value(name, "must have " + std::to_string(ndim) + " dimension(s), got " +
                        std::to_string(a.ndim()));
  const auto r = static_cast<std::int64_t>(a.shape(0));
  const auto c = ndim == 2 ? static_cast<std::int64_t>(a.shape(1)) : 1;
  if ((rows >= 0 && r != rows) || (cols >= 0 && ndim == 2 && c != cols))
    bad_value(name, "has shape [" + std::to_string(r) +
                        (ndim == 2 ? ", " + std::to_string(c) : "") + "], expected [" +
                        std::to_string(rows) + (ndim == 2 ? ", " + std::to_string(cols) : "") +
                        "]");
  const bool contiguous = ndim == 1
                              ? (r <= 1 || a.stride(0) == 1)
                              : ((c <= 1 || a.stride(1) == 1) && (r <= 1 || a.stride(0) == c));
  if (!contiguous) bad_value(name, "must be C-contiguous (.contiguous())");
  return const_cast<void*>(static_cast<const void*>(a.data()));
}

template <class A>
void require_dtype(const A& a, const char* name, std::initializer_list<nb::dlpack::dtype> ok,
                   const char* want) {
  for (const auto& d : ok)
    if (a.dtype() == d) return;
  throw nb::type_error((std::string(name) + " must be " + want).c_str());
}

// The context of this thread for one device (scratch is per stream user).
cuda::Context& context(int device) {
  thread_local std::map<int, std::unique_ptr<cuda::Context>> contexts;
  auto& c = contexts[device];
  if (!c) c = std::make_unique<cuda::Context>();
  return *c;
}

struct CudaLogits {
  LogitsView view;
  int device = 0;
};

CudaLogits cuda_logits(const AnyArray& a, std::uintptr_t stream) {
  require_dtype(a, "logits", {kF32, kBF16}, "float32 or bfloat16");
  if (a.ndim() != 1 && a.ndim() != 2) bad_value("logits", "must be [V] or [B, V]");
  const auto rows = a.ndim() == 1 ? std::int64_t{1} : static_cast<std::int64_t>(a.shape(0));
  const auto vocab = static_cast<std::int64_t>(a.shape(a.ndim() - 1));
  if (rows == 0 || vocab == 0) bad_value("logits", "is empty");
  CudaLogits out;
  out.device = a.device_id();
  void* p = a.ndim() == 1 ? cuda_data(a, "logits", 1, vocab, -1, -1)
                          : cuda_data(a, "logits", 2, rows, vocab, -1);
  out.view = LogitsView::cuda_rows(p, a.dtype() == kF32 ? DType::kF32 : DType::kBF16, rows, vocab,
                                   reinterpret_cast<void*>(stream));
  return out;
}

}  // namespace

void bind_cuda(nb::module_& m) {
  m.def("_cuda_built", &cuda::built_with_cuda, "Whether this build has the CUDA backend.");
  m.def(
      "_pcg32_states",
      [](const std::vector<std::uint64_t>& seeds) {
        std::vector<std::uint64_t> out;
        for (std::uint64_t s : seeds) {
          const Pcg32 g = Pcg32::for_seed(s);
          out.push_back(g.state());
          out.push_back(g.inc());
        }
        return to_numpy(std::move(out), {seeds.size(), 2});
      },
      nb::arg("seeds"), "The (state, inc) of Pcg32::for_seed per seed, uint64 [B, 2].");
  m.def(
      "_cuda_sample",
      [](const AnyArray& logits, const std::optional<AnyArray>& mask, const MutArray& rng,
         const MutArray& tokens, const MutArray& status, const std::optional<MutArray>& probs,
         const std::optional<AnyArray>& history, const std::optional<AnyArray>& history_len,
         const std::optional<AnyArray>& bias_offsets, const std::optional<AnyArray>& bias_ids,
         const std::optional<AnyArray>& bias_values, std::uintptr_t stream, float temperature,
         float top_p, std::int32_t top_k, float min_p, const std::string& filter_order,
         float repetition_penalty, float presence_penalty, float frequency_penalty,
         std::uint32_t penalty_window,
         const std::optional<std::unordered_map<std::int32_t, float>>& logit_bias) {
        const CudaLogits l = cuda_logits(logits, stream);
        const std::int64_t b = l.view.rows, v = l.view.vocab;
        // The same checks as the CPU path; the bias itself comes as arrays.
        const Configs c = make_configs(temperature, top_p, top_k, min_p, std::nullopt, 0,
                                       filter_order, repetition_penalty, presence_penalty,
                                       frequency_penalty, logit_bias, penalty_window);
        const std::vector<cuda::RowParams> params(static_cast<std::size_t>(b),
                                                  cuda::RowParams::from(c.sampler, c.penalties));
        cuda::PipelineInputs in;
        if (mask) {
          require_dtype(*mask, "mask", {kI32, kU32}, "int32 (or uint32)");
          in.mask = static_cast<const std::uint32_t*>(
              cuda_data(*mask, "mask", 2, b, (v + 31) / 32, l.device));
        }
        if (history.has_value() != history_len.has_value())
          bad_value("history", "needs history_len");
        if (history) {
          require_dtype(*history, "history", {kI32}, "int32");
          require_dtype(*history_len, "history_len", {kI32}, "int32");
          in.history =
              static_cast<const std::int32_t*>(cuda_data(*history, "history", 2, b, -1, l.device));
          in.history_len = static_cast<const std::int32_t*>(
              cuda_data(*history_len, "history_len", 1, b, -1, l.device));
          in.history_stride = static_cast<std::int32_t>(history->shape(1));
          if (in.history_stride == 0) bad_value("history", "needs at least one column");
        }
        if (bias_offsets) {
          if (!bias_ids || !bias_values) bad_value("logit_bias", "needs offsets, ids and values");
          require_dtype(*bias_offsets, "bias_offsets", {kI32}, "int32");
          require_dtype(*bias_ids, "bias_ids", {kI32}, "int32");
          require_dtype(*bias_values, "bias_values", {kF32}, "float32");
          in.bias_offsets = static_cast<const std::int32_t*>(
              cuda_data(*bias_offsets, "bias_offsets", 1, b + 1, -1, l.device));
          in.bias_ids = static_cast<const std::int32_t*>(
              cuda_data(*bias_ids, "bias_ids", 1, -1, -1, l.device));
          in.bias_values = static_cast<const float*>(
              cuda_data(*bias_values, "bias_values", 1, bias_ids->shape(0), -1, l.device));
        }
        require_dtype(rng, "rng", {kI64, kU64}, "int64 or uint64 [B, 2]");
        require_dtype(tokens, "tokens", {kI32}, "int32");
        require_dtype(status, "status", {kI32}, "int32");
        cuda::PipelineOutputs out;
        auto* states = static_cast<cuda::RngState*>(cuda_data(rng, "rng", 2, b, 2, l.device));
        out.tokens = static_cast<std::int32_t*>(cuda_data(tokens, "tokens", 1, b, -1, l.device));
        out.status = static_cast<std::int32_t*>(cuda_data(status, "status", 1, b, -1, l.device));
        if (probs) {
          require_dtype(*probs, "probs", {kF32}, "float32");
          out.probs = static_cast<float*>(cuda_data(*probs, "probs", 2, b, v, l.device));
        }
        context(l.device).sample(l.view, params, in, states, out);
      },
      nb::arg("logits"), nb::arg("mask").none(), nb::arg("rng"), nb::arg("tokens"),
      nb::arg("status"), nb::arg("probs").none(), nb::arg("history").none(),
      nb::arg("history_len").none(), nb::arg("bias_offsets").none(), nb::arg("bias_ids").none(),
      nb::arg("bias_values").none(), nb::arg("stream"), nb::arg("temperature"), nb::arg("top_p"),
      nb::arg("top_k"), nb::arg("min_p"), nb::arg("filter_order"), nb::arg("repetition_penalty"),
      nb::arg("presence_penalty"), nb::arg("frequency_penalty"), nb::arg("penalty_window"),
      nb::arg("logit_bias").none(),
      "Enqueues the sampling pipeline on `stream` for CUDA logits (nextok.sample calls it).");
  m.def(
      "_cuda_top_logprobs",
      [](const AnyArray& logits, std::uint32_t k, const AnyArray& chosen, const MutArray& ids,
         const MutArray& logprobs, const MutArray& count, const MutArray& chosen_logprob,
         const MutArray& status, std::uintptr_t stream) {
        const CudaLogits l = cuda_logits(logits, stream);
        const std::int64_t b = l.view.rows;
        const auto kmax = static_cast<std::int64_t>(kMaxTopLogprobs);
        require_dtype(chosen, "chosen", {kI32}, "int32");
        require_dtype(ids, "ids", {kI32}, "int32");
        require_dtype(logprobs, "logprobs", {kF32}, "float32");
        require_dtype(count, "count", {kI32}, "int32");
        require_dtype(chosen_logprob, "chosen_logprob", {kF32}, "float32");
        require_dtype(status, "status", {kI32}, "int32");
        cuda::LogprobsOutputs out;
        out.ids = static_cast<std::int32_t*>(cuda_data(ids, "ids", 2, b, kmax, l.device));
        out.logprobs = static_cast<float*>(cuda_data(logprobs, "logprobs", 2, b, kmax, l.device));
        out.count = static_cast<std::int32_t*>(cuda_data(count, "count", 1, b, -1, l.device));
        out.chosen_logprob =
            static_cast<float*>(cuda_data(chosen_logprob, "chosen_logprob", 1, b, -1, l.device));
        out.status = static_cast<std::int32_t*>(cuda_data(status, "status", 1, b, -1, l.device));
        const auto* ch =
            static_cast<const std::int32_t*>(cuda_data(chosen, "chosen", 1, b, -1, l.device));
        const std::vector<std::uint32_t> ks(static_cast<std::size_t>(b), k);
        context(l.device).top_logprobs(l.view, ks, ch, out);
      },
      nb::arg("logits"), nb::arg("k"), nb::arg("chosen"), nb::arg("ids"), nb::arg("logprobs"),
      nb::arg("count"), nb::arg("chosen_logprob"), nb::arg("status"), nb::arg("stream"),
      "Enqueues top-k logprobs on `stream` for CUDA logits.");
  m.def(
      "_cuda_apply_token_bitmask",
      [](const MutArray& logits, const AnyArray& bitmask, std::uintptr_t stream) {
        require_dtype(logits, "logits", {kF32, kBF16}, "float32 or bfloat16");
        require_dtype(bitmask, "bitmask", {kI32, kU32}, "int32 (or uint32)");
        if (logits.ndim() != bitmask.ndim())
          bad_value("bitmask", "must have the logits' dimensions ([W] for [V], [B, W] for [B, V])");
        const bool one = logits.ndim() == 1;
        const auto rows = one ? std::int64_t{1} : static_cast<std::int64_t>(logits.shape(0));
        const auto vocab = static_cast<std::int64_t>(logits.shape(one ? 0 : 1));
        const auto words = static_cast<std::int64_t>(bitmask.shape(one ? 0 : 1));
        void* x = one ? cuda_data(logits, "logits", 1, vocab, -1, -1)
                      : cuda_data(logits, "logits", 2, rows, vocab, -1);
        const int device = logits.device_id();
        const auto* w = static_cast<const std::uint32_t*>(
            one ? cuda_data(bitmask, "bitmask", 1, words, -1, device)
                : cuda_data(bitmask, "bitmask", 2, rows, words, device));
        context(device).apply_token_bitmask(x, logits.dtype() == kF32 ? DType::kF32 : DType::kBF16,
                                            rows, vocab, w, words, reinterpret_cast<void*>(stream));
      },
      nb::arg("logits"), nb::arg("bitmask"), nb::arg("stream"),
      "Masks CUDA logits in place on `stream` (apply_token_bitmask_inplace calls it).");
}

}  // namespace nextok::py
