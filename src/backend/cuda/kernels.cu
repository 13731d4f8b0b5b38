// Launch configuration for every CUDA kernel: the split argmax and the
// cluster-per-row pipeline and logprobs kernels.
#include <cuda_runtime.h>

#include <algorithm>

#include "backend/cuda/argmax.cuh"
#include "backend/cuda/launch.hpp"
#include "backend/cuda/logprobs.cuh"
#include "backend/cuda/pipeline.cuh"

namespace nextok::cuda::detail {
namespace {

int sm_count() {
  static const int n = [] {
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
    return v > 0 ? v : 1;
  }();
  return n;
}

int smem_optin() {
  static const int n = [] {
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    return v;
  }();
  return n;
}

template <typename Kernel>
RowLayout layout_for(Kernel kernel, std::int64_t rows, std::int64_t vocab) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) return {};
  const std::size_t budget = static_cast<std::size_t>(smem_optin()) - attr.sharedSizeBytes;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(budget));
  cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  // Spread small batches over more SMs: about two row blocks per SM in all.
  const std::int64_t want = std::clamp<std::int64_t>((2 * sm_count() + rows - 1) / rows, 1, 16);
  RowLayout fit{};
  for (int c = 1; c <= 16; c *= 2) {
    RowLayout l;
    l.cluster = c;
    l.slice_len = static_cast<int>((vocab + c - 1) / c);
    l.per_thread = ((l.slice_len + dev::kRowThreads - 1) / dev::kRowThreads) | 1;
    l.smem = dev::kRowSmemFixed +
             static_cast<std::size_t>(l.per_thread) * dev::kRowThreads * sizeof(float);
    if (l.smem > budget) continue;
    fit = l;
    if (c >= want) break;
  }
  // A cluster of 16 may not be schedulable on every part: fall back.
  while (fit.cluster > 8) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(fit.cluster));
    cfg.blockDim = dim3(dev::kRowThreads);
    cfg.dynamicSmemBytes = fit.smem;
    cudaLaunchAttribute at{};
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = static_cast<unsigned>(fit.cluster);
    at.val.clusterDim.y = 1;
    at.val.clusterDim.z = 1;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) == cudaSuccess && n > 0) break;
    cudaGetLastError();
    const int c = fit.cluster / 2;
    RowLayout l;
    l.cluster = c;
    l.slice_len = static_cast<int>((vocab + c - 1) / c);
    l.per_thread = ((l.slice_len + dev::kRowThreads - 1) / dev::kRowThreads) | 1;
    l.smem = dev::kRowSmemFixed +
             static_cast<std::size_t>(l.per_thread) * dev::kRowThreads * sizeof(float);
    if (l.smem > budget) break;
    fit = l;
  }
  return fit;
}

template <typename Kernel, typename Args>
int launch_rows(Kernel kernel, const RowLayout& lay, std::int64_t rows, const Args& args,
                void* stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * lay.cluster));
  cfg.blockDim = dim3(dev::kRowThreads);
  cfg.dynamicSmemBytes = lay.smem;
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = static_cast<unsigned>(lay.cluster);
  at.val.clusterDim.y = 1;
  at.val.clusterDim.z = 1;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, kernel, args));
}

}  // namespace

int argmax_splits(std::int64_t rows, std::int64_t vocab) noexcept {
  const std::int64_t per_block = dev::kArgmaxThreads * dev::kArgmaxUnroll * 2;
  const std::int64_t want = (4 * sm_count() + rows - 1) / rows;
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, vocab / per_block), 1, 1024));
}

int launch_argmax(const void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                  const std::uint32_t* mask, int splits, void* partials, unsigned* counters,
                  std::int32_t* tokens, std::int32_t* status, void* stream) noexcept {
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(rows));
  auto* parts = static_cast<dev::ArgmaxPartial*>(partials);
  auto s = static_cast<cudaStream_t>(stream);
  if (bf16) {
    dev::argmax_kernel<<<grid, dev::kArgmaxThreads, 0, s>>>(
        static_cast<const std::uint16_t*>(logits), vocab, mask, splits, parts, counters, tokens,
        status);
  } else {
    dev::argmax_kernel<<<grid, dev::kArgmaxThreads, 0, s>>>(
        static_cast<const float*>(logits), vocab, mask, splits, parts, counters, tokens, status);
  }
  return static_cast<int>(cudaGetLastError());
}

RowLayout pipeline_layout(std::int64_t rows, std::int64_t vocab) noexcept {
  return layout_for(dev::pipeline_kernel, rows, vocab);
}

RowLayout logprobs_layout(std::int64_t rows, std::int64_t vocab) noexcept {
  return layout_for(dev::logprobs_kernel, rows, vocab);
}

int launch_pipeline(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                    std::int64_t vocab, const RowParams* params, const PipelineInputs& in,
                    RngState* rng, const PipelineOutputs& out, void* stream) noexcept {
  const dev::PipelineArgs a{logits, bf16, vocab, lay.slice_len, lay.per_thread, params,
                            in,     rng,  out};
  return launch_rows(dev::pipeline_kernel, lay, rows, a, stream);
}

int launch_logprobs(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                    std::int64_t vocab, const std::uint32_t* k, const std::int32_t* chosen,
                    const LogprobsOutputs& out, void* stream) noexcept {
  const dev::LogprobsArgs a{logits, bf16, vocab, lay.slice_len, lay.per_thread, k, chosen, out};
  return launch_rows(dev::logprobs_kernel, lay, rows, a, stream);
}

}  // namespace nextok::cuda::detail
