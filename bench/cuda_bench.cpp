// CUDA kernel benchmark: one JSON line per (impl, B, V, dtype) with the
// median of per-launch CUDA-event timings after a warm-up. Logits are
// standard normal, as in torch.randn; bench/cuda_anchor.py times torch and
// FlashInfer on the same shapes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/cuda/launch.hpp"
#include "nextok/config.hpp"
#include "nextok/cuda.hpp"
#include "nextok/mask.hpp"

namespace {

double median_us(const std::function<void()>& fn, int warmup, int iters) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(a);
    fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(static_cast<double>(ms) * 1000.0);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFU + ((u >> 16) & 1U)) >> 16);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nextok;
  const int iters = argc > 1 ? std::atoi(argv[1]) : 100;
  // Optional: the batch sizes, comma-separated (default 1,8,64,256).
  std::vector<std::int64_t> batches{1, 8, 64, 256};
  if (argc > 2) {
    batches.clear();
    for (const char* c = argv[2]; *c != '\0';) {
      char* end = nullptr;
      const long long b = std::strtoll(c, &end, 10);
      if (end == c || b <= 0) {
        std::fprintf(stderr, "batch sizes: comma-separated positive integers\n");
        return 2;
      }
      batches.push_back(b);
      c = *end == ',' ? end + 1 : end;
    }
  }
  if (!cuda::device_available()) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  cuda::Context ctx;
  std::mt19937_64 g(42);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (std::int64_t vocab : {151936, 262144}) {
    for (std::int64_t rows : batches) {
      const auto count = static_cast<std::size_t>(rows * vocab);
      std::vector<float> h(count);
      for (float& x : h) x = n(g);
      std::vector<std::uint16_t> hb(count);
      for (std::size_t i = 0; i < count; ++i) hb[i] = to_bf16(h[i]);
      const std::size_t words = bitmask_words(static_cast<std::size_t>(vocab));
      std::vector<std::uint32_t> mask(words * static_cast<std::size_t>(rows));
      for (auto& w : mask) w = static_cast<std::uint32_t>(g());
      void *d_f32, *d_bf16, *d_mask, *d_tok, *d_st, *d_rng;
      cudaMalloc(&d_f32, count * 4);
      cudaMalloc(&d_bf16, count * 2);
      cudaMalloc(&d_mask, mask.size() * 4);
      cudaMalloc(&d_tok, static_cast<std::size_t>(rows) * 4);
      cudaMalloc(&d_st, static_cast<std::size_t>(rows) * 4);
      cudaMalloc(&d_rng, static_cast<std::size_t>(rows) * sizeof(cuda::RngState));
      cudaMemcpy(d_f32, h.data(), count * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(d_bf16, hb.data(), count * 2, cudaMemcpyHostToDevice);
      cudaMemcpy(d_mask, mask.data(), mask.size() * 4, cudaMemcpyHostToDevice);
      constexpr int kWindow = 64;
      std::vector<std::int32_t> hist(static_cast<std::size_t>(rows) * kWindow),
          hist_len(static_cast<std::size_t>(rows), kWindow);
      for (auto& id : hist) id = static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(vocab));
      void *d_hist, *d_hist_len;
      cudaMalloc(&d_hist, hist.size() * 4);
      cudaMalloc(&d_hist_len, hist_len.size() * 4);
      cudaMemcpy(d_hist, hist.data(), hist.size() * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(d_hist_len, hist_len.data(), hist_len.size() * 4, cudaMemcpyHostToDevice);
      std::vector<cuda::RngState> rng;
      std::vector<cuda::RowParams> params, params_kf, params_pen;
      for (std::int64_t r = 0; r < rows; ++r) {
        rng.push_back(cuda::RngState::from(Pcg32::for_seed(static_cast<std::uint64_t>(r))));
        cuda::RowParams p;
        p.temperature = 1.0f;
        p.top_k = 50;
        p.top_p = 0.9f;
        params.push_back(p);
        p.filter_order = FilterOrder::kTopKFirst;  // FlashInfer's default order
        params_kf.push_back(p);
        p.repetition_penalty = 1.1f;
        p.window = kWindow;
        params_pen.push_back(p);
      }
      cudaMemcpy(d_rng, rng.data(), rng.size() * sizeof(cuda::RngState), cudaMemcpyHostToDevice);
      void *d_copy, *d_k, *d_lp_ids, *d_lp, *d_lp_n, *d_lp_chosen;
      const auto r20 = static_cast<std::size_t>(rows) * kMaxTopLogprobs;
      cudaMalloc(&d_copy, count * 4);
      cudaMalloc(&d_k, static_cast<std::size_t>(rows) * 4);
      cudaMalloc(&d_lp_ids, r20 * 4);
      cudaMalloc(&d_lp, r20 * 4);
      cudaMalloc(&d_lp_n, static_cast<std::size_t>(rows) * 4);
      cudaMalloc(&d_lp_chosen, static_cast<std::size_t>(rows) * 4);
      const std::vector<std::uint32_t> k20(static_cast<std::size_t>(rows), kMaxTopLogprobs);
      cudaMemcpy(d_k, k20.data(), k20.size() * 4, cudaMemcpyHostToDevice);
      cudaMemset(d_tok, 0, static_cast<std::size_t>(rows) * 4);
      auto* tok = static_cast<std::int32_t*>(d_tok);
      auto* st = static_cast<std::int32_t*>(d_st);
      for (DType dt : {DType::kF32, DType::kBF16}) {
        const LogitsView v =
            LogitsView::cuda_rows(dt == DType::kF32 ? d_f32 : d_bf16, dt, rows, vocab);
        const char* dn = dt == DType::kF32 ? "f32" : "bf16";
        auto emit = [&](const char* impl, double us) {
          std::printf(
              "{\"impl\": \"%s\", \"B\": %lld, \"V\": %lld, \"dtype\": \"%s\", \"median_us\": "
              "%.2f}\n",
              impl, static_cast<long long>(rows), static_cast<long long>(vocab), dn, us);
          std::fflush(stdout);
        };
        // Per call over 20 back-to-back calls between two events.
        auto b2b = [&](const std::function<void()>& fn) {
          return median_us(
                     [&] {
                       for (int k = 0; k < 20; ++k) fn();
                     },
                     2, std::max(5, iters / 5)) /
                 20.0;
        };
        // The floor the issue measures against: a device-to-device copy of
        // the same rows (reads and writes them once).
        const std::size_t bytes = count * (dt == DType::kF32 ? 4 : 2);
        auto copy = [&] { cudaMemcpyAsync(d_copy, v.data, bytes, cudaMemcpyDeviceToDevice); };
        emit("copy", median_us(copy, 10, iters));
        emit("copy_b2b", b2b(copy));
        // XGrammar's apply_token_bitmask_inplace on the same mask (the copy
        // holds the rows; masking again is idempotent).
        emit("nextok_apply_bitmask", median_us(
                                         [&] {
                                           ctx.apply_token_bitmask(
                                               d_copy, dt, rows, vocab,
                                               static_cast<std::uint32_t*>(d_mask),
                                               static_cast<std::int64_t>(words), nullptr);
                                         },
                                         10, iters));
        emit("nextok_argmax", median_us([&] { ctx.argmax(v, nullptr, tok, st); }, 10, iters));
        emit("nextok_argmax_b2b", b2b([&] { ctx.argmax(v, nullptr, tok, st); }));
        auto logprobs = [&] {
          ctx.top_logprobs_device_k(
              v, static_cast<std::uint32_t*>(d_k), tok,
              {static_cast<std::int32_t*>(d_lp_ids), static_cast<float*>(d_lp),
               static_cast<std::int32_t*>(d_lp_n), static_cast<float*>(d_lp_chosen), st});
        };
        for (const bool one_read : {false, true}) {
          cuda::detail::set_logprobs_one_read(one_read);
          const std::string name =
              std::string("nextok_logprobs_top20_") + (one_read ? "one_read" : "cluster");
          emit(name.c_str(), median_us(logprobs, 10, iters));
          emit((name + "_b2b").c_str(), b2b(logprobs));
        }
        cuda::detail::set_logprobs_one_read(true);  // the default
        for (const int bps : {1, 2, 4}) {           // blocks per SM (default: f32 1, bf16 2)
          cuda::detail::set_logprobs_blocks_per_sm(bps);
          const std::string name = "nextok_logprobs_top20_one_read_bps" + std::to_string(bps);
          emit(name.c_str(), median_us(logprobs, 10, iters));
          emit((name + "_b2b").c_str(), b2b(logprobs));
        }
        cuda::detail::set_logprobs_blocks_per_sm(0);
        emit("nextok_masked_argmax",
             median_us([&] { ctx.argmax(v, static_cast<std::uint32_t*>(d_mask), tok, st); }, 10,
                       iters));
        auto* d_rs = static_cast<cuda::RngState*>(d_rng);
        for (const auto& [name, ps] :
             {std::pair{std::string("nextok_pipeline_topk50_topp0.9"), &params},
              std::pair{std::string("nextok_pipeline_top_k_first_topk50_topp0.9"), &params_kf}}) {
          // Back-to-back launches between two events, per call: the device
          // time when the host enqueues faster than the kernel runs.
          emit((name + "_b2b").c_str(), median_us(
                                            [&] {
                                              for (int k = 0; k < 20; ++k)
                                                ctx.sample(v, *ps, {}, d_rs, {tok, st, nullptr});
                                            },
                                            2, std::max(5, iters / 5)) /
                                            20.0);
          emit(name.c_str(), median_us(
                                 [&] {
                                   ctx.sample(v, *ps, {}, d_rs, {tok, st, nullptr});
                                 },
                                 10, iters));
        }
        // top_k_first with each kernel alone (b2b): the streaming kernel
        // (every batch size) and the cluster kernel.
        const std::int64_t auto_rows = cuda::detail::stream_min_rows();
        for (const auto& [name, min_rows, ps] :
             {std::tuple{"nextok_pipeline_top_k_first_streaming_b2b", std::int64_t{1}, &params_kf},
              std::tuple{"nextok_pipeline_top_k_first_cluster_b2b", INT64_MAX, &params_kf},
              std::tuple{"nextok_pipeline_spec_streaming_b2b", std::int64_t{1}, &params},
              std::tuple{"nextok_pipeline_spec_cluster_b2b", INT64_MAX, &params}}) {
          cuda::detail::set_stream_min_rows(min_rows);
          emit(name, median_us(
                         [&] {
                           for (int k = 0; k < 20; ++k)
                             ctx.sample(v, *ps, {}, d_rs, {tok, st, nullptr});
                         },
                         2, std::max(5, iters / 5)) /
                         20.0);
        }
        cuda::detail::set_stream_min_rows(auto_rows);
        // The spec order with its top-p mass read twice (the bound off): what
        // the one-read bound saves.
        cuda::detail::set_stream_mass_bound(false);
        emit("nextok_pipeline_topk50_topp0.9_two_reads_b2b",
             median_us(
                 [&] {
                   for (int k = 0; k < 20; ++k) ctx.sample(v, params, {}, d_rs, {tok, st, nullptr});
                 },
                 2, std::max(5, iters / 5)) /
                 20.0);
        cuda::detail::set_stream_mass_bound(true);
        // What two launch details save (both on by default): the pipeline
        // kernels as programmatic dependents (PDL), and streamed batches'
        // params in the kernel arguments instead of an upload per call.
        for (const auto& [name, pdl, inl] :
             {std::tuple{"nextok_pipeline_topk50_topp0.9_no_pdl_b2b", false, true},
              std::tuple{"nextok_pipeline_topk50_topp0.9_uploaded_params_b2b", true, false}}) {
          cuda::detail::set_pipeline_pdl(pdl);
          cuda::detail::set_stream_inline_params(inl);
          emit(name, median_us(
                         [&] {
                           for (int k = 0; k < 20; ++k)
                             ctx.sample(v, params, {}, d_rs, {tok, st, nullptr});
                         },
                         2, std::max(5, iters / 5)) /
                         20.0);
        }
        cuda::detail::set_pipeline_pdl(true);
        cuda::detail::set_stream_inline_params(true);
        // One captured step (top_k_first, params read from device memory)
        // per graph launch: what an engine replaying graphs pays per call.
        {
          cudaStream_t gs = nullptr;
          cudaStreamCreate(&gs);  // blocking: the timing events on stream 0 bracket it
          ctx.reserve(rows, vocab);
          cuda::RowParams* d_params = nullptr;
          cudaMalloc(reinterpret_cast<void**>(&d_params),
                     params_kf.size() * sizeof(cuda::RowParams));
          cudaMemcpy(d_params, params_kf.data(), params_kf.size() * sizeof(cuda::RowParams),
                     cudaMemcpyHostToDevice);
          LogitsView gv = v;
          gv.stream = gs;
          cudaGraph_t graph = nullptr;
          cudaGraphExec_t exec = nullptr;
          cudaStreamBeginCapture(gs, cudaStreamCaptureModeGlobal);
          ctx.sample_device_params(gv, d_params, {}, d_rs, {tok, st, nullptr});
          if (cudaStreamEndCapture(gs, &graph) != cudaSuccess ||
              cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
            std::fprintf(stderr, "graph capture failed\n");
            return 1;
          }
          auto replay = [&] { cudaGraphLaunch(exec, gs); };
          emit("nextok_pipeline_top_k_first_graph", median_us(replay, 10, iters));
          emit("nextok_pipeline_top_k_first_graph_b2b", b2b(replay));
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
          cudaFree(d_params);
          cudaStreamDestroy(gs);
        }
        // top_k_first with a repetition penalty over a 64-token window.
        cuda::PipelineInputs pen_in;
        pen_in.history = static_cast<std::int32_t*>(d_hist);
        pen_in.history_len = static_cast<std::int32_t*>(d_hist_len);
        pen_in.history_stride = kWindow;
        emit("nextok_pipeline_top_k_first_penalised_b2b",
             median_us(
                 [&] {
                   for (int k = 0; k < 20; ++k)
                     ctx.sample(v, params_pen, pen_in, d_rs, {tok, st, nullptr});
                 },
                 2, std::max(5, iters / 5)) /
                 20.0);
      }
      const cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
      }
      for (void* p : {d_f32, d_bf16, d_mask, d_tok, d_st, d_rng, d_hist, d_hist_len, d_copy, d_k,
                      d_lp_ids, d_lp, d_lp_n, d_lp_chosen})
        cudaFree(p);
    }
  }
  return 0;
}
