// Launch configuration for every CUDA kernel: the split argmax and the
// cluster-per-row pipeline and logprobs kernels.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/cuda/argmax.cuh"
#include "backend/cuda/launch.hpp"
#include "backend/cuda/logprobs.cuh"
#include "backend/cuda/logprobs_cluster.cuh"
#include "backend/cuda/pipeline.cuh"
#include "backend/cuda/stream.cuh"

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

// Every cluster size that fits V in shared memory, with how many such
// clusters the device runs at once (0: that size does not fit or cannot be
// scheduled). Depends on the kernel and V only.
constexpr int kClusterSizes = 5;  // 1, 2, 4, 8, 16
struct ClusterOptions {
  RowLayout lay[kClusterSizes];
  int active[kClusterSizes] = {};
};

template <typename Kernel>
ClusterOptions cluster_options(Kernel kernel, std::int64_t vocab) {
  ClusterOptions o;
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) return o;
  const std::size_t budget = static_cast<std::size_t>(smem_optin()) - attr.sharedSizeBytes;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       static_cast<int>(budget));
  cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int i = 0; i < kClusterSizes; ++i) {
    RowLayout l;
    l.cluster = 1 << i;
    l.slice_len = static_cast<int>((vocab + l.cluster - 1) / l.cluster);
    const int per = (l.slice_len + dev::kRowThreads - 1) / dev::kRowThreads;
    auto smem = [](int p) {
      return dev::kRowSmemFixed + static_cast<std::size_t>(p) * dev::kRowThreads * sizeof(float);
    };
    // An odd count per thread keeps the per-thread chunks free of bank
    // conflicts; an even one (2-way conflicts) when only that fits.
    l.per_thread = smem(per | 1) <= budget ? (per | 1) : per;
    l.smem = smem(l.per_thread);
    if (l.smem > budget) continue;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(l.cluster));
    cfg.blockDim = dim3(dev::kRowThreads);
    cfg.dynamicSmemBytes = l.smem;
    cudaLaunchAttribute at{};
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = static_cast<unsigned>(l.cluster);
    at.val.clusterDim.y = 1;
    at.val.clusterDim.z = 1;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess || n <= 0) {
      cudaGetLastError();
      continue;
    }
    o.lay[i] = l;
    o.active[i] = n;
  }
  return o;
}

// The cluster size with the least modelled time: waves of clusters times a
// block's time, a fixed part (barriers, exchanges, the tail) plus a part per
// id of its slice. Constants fitted on the H200 (device time of one wave of
// 9.5K-, 19K- and 38K-id blocks at V 151936): about 11.5 us + 0.91 us per
// 1,000 ids. Small batches get large clusters (short slices), large ones
// fewer blocks per row.
RowLayout choose_layout(const ClusterOptions& o, std::int64_t rows) {
  constexpr double kFixedUs = 11.5, kPerIdUs = 0.91e-3;
  RowLayout best{};
  double best_us = 0.0;
  for (int i = 0; i < kClusterSizes; ++i) {
    if (o.active[i] <= 0) continue;
    const std::int64_t waves = (rows + o.active[i] - 1) / o.active[i];
    const double us = static_cast<double>(waves) *
                      (kFixedUs + kPerIdUs * static_cast<double>(o.lay[i].slice_len));
    if (best.cluster == 0 || us < best_us) {
      best = o.lay[i];
      best.active = o.active[i];
      best_us = us;
    }
  }
  return best;
}

// The options cost several driver calls (attributes, cluster occupancy per
// size), so each kernel caches them per V; the choice per batch size is
// arithmetic and stays off the driver.
struct LayoutCache {
  std::mutex mu;
  std::vector<std::pair<std::int64_t, ClusterOptions>> entries;
};

// options_of(vocab) computes the options on a miss.
template <typename OptionsOf>
RowLayout cached_layout(LayoutCache& cache, OptionsOf options_of, std::int64_t rows,
                        std::int64_t vocab) {
  const std::lock_guard<std::mutex> lock(cache.mu);
  for (const auto& e : cache.entries)
    if (e.first == vocab) return choose_layout(e.second, rows);
  if (cache.entries.size() >= 64) cache.entries.erase(cache.entries.begin());
  cache.entries.emplace_back(vocab, options_of(vocab));
  return choose_layout(cache.entries.back().second, rows);
}

// The attribute that lets a launch start while the kernel before it in the
// stream still runs (programmatic dependent launch); the kernel's
// dev::grid_wait() then waits for that one.
cudaLaunchAttribute pdl_attribute() {
  cudaLaunchAttribute at{};
  at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at.val.programmaticStreamSerializationAllowed = 1;
  return at;
}

// pdl: the pipeline kernels (they call dev::grid_wait() first).
template <typename Kernel, typename Args>
int launch_rows(Kernel kernel, const RowLayout& lay, std::int64_t rows, const Args& args,
                void* stream, bool pdl = false) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * lay.cluster));
  cfg.blockDim = dim3(dev::kRowThreads);
  cfg.dynamicSmemBytes = lay.smem;
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute at[2]{};
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = static_cast<unsigned>(lay.cluster);
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  at[1] = pdl_attribute();
  cfg.attrs = at;
  cfg.numAttrs = pdl ? 2 : 1;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, kernel, args));
}

}  // namespace

int argmax_splits(std::int64_t rows, std::int64_t vocab) noexcept {
  const std::int64_t per_block = std::int64_t{dev::kArgmaxThreads} * 16;
  const std::int64_t want = (4 * sm_count() + rows - 1) / rows;
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, vocab / per_block), 1, 1024));
}

namespace {
// Ids per block of a row split `splits` ways: a multiple of 8 (every group
// width), so groups never straddle two blocks.
std::int64_t split_chunk(std::int64_t vocab, int splits) {
  return ((vocab + splits - 1) / splits + 7) / 8 * 8;
}
}  // namespace

int launch_argmax(const void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                  const std::uint32_t* mask, int splits, void* partials, unsigned* counters,
                  std::int32_t* tokens, std::int32_t* status, void* stream) noexcept {
  const std::int64_t chunk = split_chunk(vocab, splits);
  const dim3 grid(static_cast<unsigned>((vocab + chunk - 1) / chunk), static_cast<unsigned>(rows));
  auto* parts = static_cast<dev::ArgmaxPartial*>(partials);
  auto s = static_cast<cudaStream_t>(stream);
  const int used = static_cast<int>(grid.x);  // <= splits
  if (bf16) {
    const auto* x = static_cast<const std::uint16_t*>(logits);
    if (dev::rows_vectorizable(logits, vocab, 2)) {
      dev::argmax_kernel<std::uint16_t, 8><<<grid, dev::kArgmaxThreads, 0, s>>>(
          x, vocab, chunk, mask, used, parts, counters, tokens, status);
    } else {
      dev::argmax_kernel<std::uint16_t, 1><<<grid, dev::kArgmaxThreads, 0, s>>>(
          x, vocab, chunk, mask, used, parts, counters, tokens, status);
    }
  } else {
    const auto* x = static_cast<const float*>(logits);
    if (dev::rows_vectorizable(logits, vocab, 4)) {
      dev::argmax_kernel<float, 4><<<grid, dev::kArgmaxThreads, 0, s>>>(
          x, vocab, chunk, mask, used, parts, counters, tokens, status);
    } else {
      dev::argmax_kernel<float, 1><<<grid, dev::kArgmaxThreads, 0, s>>>(
          x, vocab, chunk, mask, used, parts, counters, tokens, status);
    }
  }
  return static_cast<int>(cudaGetLastError());
}

RowLayout pipeline_layout(std::int64_t rows, std::int64_t vocab) noexcept {
  // Every instance launches with one layout: computing the options sets
  // each one's launch attributes, and a size counts only where all agree.
  static LayoutCache cache;
  return cached_layout(
      cache,
      [](std::int64_t v) {
        ClusterOptions o = cluster_options(dev::pipeline_kernel<false, false>, v);
        for (const ClusterOptions& k : {cluster_options(dev::pipeline_kernel<true, false>, v),
                                        cluster_options(dev::pipeline_kernel<true, true>, v)})
          for (int i = 0; i < kClusterSizes; ++i)
            if (k.active[i] != o.active[i] || k.lay[i].smem != o.lay[i].smem) o.active[i] = 0;
        return o;
      },
      rows, vocab);
}

RowLayout logprobs_cluster_layout(std::int64_t rows, std::int64_t vocab) noexcept {
  static LayoutCache cache;
  return cached_layout(
      cache, [](std::int64_t v) { return cluster_options(dev::logprobs_cluster_kernel, v); }, rows,
      vocab);
}

int launch_logprobs_cluster(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                            std::int64_t vocab, const std::uint32_t* k, const std::int32_t* chosen,
                            const LogprobsOutputs& out, void* stream) noexcept {
  const dev::ClusterLogprobsArgs a{logits,         bf16, vocab,  lay.slice_len,
                                   lay.per_thread, k,    chosen, out};
  return launch_rows(dev::logprobs_cluster_kernel, lay, rows, a, stream);
}

namespace {
bool g_logprobs_one_read = true;
}  // namespace

bool logprobs_one_read() noexcept {
  return g_logprobs_one_read;
}
void set_logprobs_one_read(bool on) noexcept {
  g_logprobs_one_read = on;
}

namespace {
// 0: each dtype's default. f32 runs best at one block per SM (its bulk
// list insert keeps a block busy), bf16 at two while rows < SMs (H100,
// docs/cuda.md).
int g_logprobs_blocks_per_sm = 0;
}  // namespace

void set_logprobs_blocks_per_sm(int n) noexcept {
  g_logprobs_blocks_per_sm = n <= 0 ? 0 : std::min(n, 32);
}

int logprobs_splits(std::int64_t rows, std::int64_t vocab, bool bf16) noexcept {
  // About one or two blocks per SM in all (set_logprobs_blocks_per_sm), each
  // at least one step of its loop (4,096 ids at f32), and at most 64 parts
  // to fold per row.
  constexpr std::int64_t kMinIds = std::int64_t{dev::kLpThreads} * dev::kLpGroups * 4;
  // Two blocks per SM while a row has more than one, else one (H100: bf16
  // B = 64 69.6 vs 74.4 µs, B = 256 159.1 vs 146.9 at one); f32 only from a
  // quarter of the SMs in rows (B = 64 55.2 vs 61.9 µs, B = 8 38.2 vs 34.9).
  const bool two = bf16 ? rows < sm_count() : rows < sm_count() && rows * 4 >= sm_count();
  const int per_sm = g_logprobs_blocks_per_sm > 0 ? g_logprobs_blocks_per_sm : (two ? 2 : 1);
  // Rounded down, so that the blocks fit the wave: B = 64 f32 at one per SM
  // on 132 SMs takes 2 blocks a row (128), not 3 (192, 60 SMs running two).
  const std::int64_t want = std::max<std::int64_t>(1, std::int64_t{per_sm} * sm_count() / rows);
  const std::int64_t most = std::max<std::int64_t>(1, (vocab + kMinIds - 1) / kMinIds);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, most), 1, 64));
}

static bool g_stamp = false;
void set_pipeline_stamps(bool on) noexcept {
  g_stamp = on;
}
int pipeline_stamps(long long* out16) noexcept {
  return static_cast<int>(
      cudaMemcpyFromSymbol(out16, dev::g_pipeline_stamps, 16 * sizeof(long long)));
}

int pipeline_block_ns(unsigned long long* out64) noexcept {
  return static_cast<int>(
      cudaMemcpyFromSymbol(out64, dev::g_block_ns, 80 * sizeof(unsigned long long)));
}

namespace {
// Runs a grid-stride check kernel that adds its failures to one counter.
template <typename Kernel>
int count_failures(Kernel kernel, unsigned long long* out) {
  unsigned long long* d = nullptr;
  int err = static_cast<int>(cudaMalloc(&d, sizeof(unsigned long long)));
  if (err != 0) return err;
  cudaMemset(d, 0, sizeof(unsigned long long));
  kernel<<<4 * sm_count(), 256>>>(d);
  err = static_cast<int>(cudaMemcpy(out, d, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  cudaFree(d);
  return err;
}
}  // namespace

int ladder_mismatches(unsigned long long* out) noexcept {
  return count_failures(dev::ladder_check_kernel, out);
}

int exp_monotone_violations(unsigned long long* out) noexcept {
  return count_failures(dev::exp_monotone_check_kernel, out);
}

int pipeline_inline_rows() noexcept {
  return dev::kInlineRows;
}

namespace {
std::int64_t g_stream_min_rows = 16;
bool g_stream_mass_bound = true;
bool g_pipeline_pdl = true;
bool g_stream_inline = true;
}  // namespace

bool pipeline_pdl() noexcept {
  return g_pipeline_pdl;
}
void set_pipeline_pdl(bool on) noexcept {
  g_pipeline_pdl = on;
}
int stream_inline_rows() noexcept {
  return g_stream_inline ? dev::kStreamInlineRows : 0;
}
void set_stream_inline_params(bool on) noexcept {
  g_stream_inline = on;
}

std::int64_t stream_min_rows() noexcept {
  return g_stream_min_rows;
}
void set_stream_min_rows(std::int64_t rows) noexcept {
  g_stream_min_rows = rows;
}
bool stream_mass_bound() noexcept {
  return g_stream_mass_bound;
}
void set_stream_mass_bound(bool on) noexcept {
  g_stream_mass_bound = on;
}

namespace {
// The streaming kernels' shared-memory attribute, set once (a driver call:
// prepare_launches makes it before any graph capture).
int stream_attributes() noexcept {
  static const int attr = [] {
    const auto set = [](auto kernel, bool mod, bool bf16) {
      return static_cast<int>(cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
          static_cast<int>(dev::stream_smem_bytes(mod, bf16))));
    };
    using Bf16 = std::uint16_t;
    int e = set(dev::stream_kernel<float, false, false>, false, false);
    if (e == 0) e = set(dev::stream_kernel<float, true, false>, true, false);
    if (e == 0) e = set(dev::stream_kernel<float, false, true>, false, false);
    if (e == 0) e = set(dev::stream_kernel<float, true, true>, true, false);
    if (e == 0) e = set(dev::stream_kernel<Bf16, false, false>, false, true);
    if (e == 0) e = set(dev::stream_kernel<Bf16, true, false>, true, true);
    if (e == 0) e = set(dev::stream_kernel<Bf16, false, true>, false, true);
    if (e == 0) e = set(dev::stream_kernel<Bf16, true, true>, true, true);
    return e;
  }();
  return attr;
}
}  // namespace

bool stream_fits(const RowParams& p, std::int64_t vocab) noexcept {
  return !(p.temperature > 0.0f) || (p.top_k > 0 && p.top_k < vocab);
}

int launch_pipeline(const RowLayout& lay, const void* logits, bool bf16, std::int64_t rows,
                    std::int64_t vocab, const RowParams* params, const RowParams* host_params,
                    bool k_first_rows, const PipelineInputs& in, RngState* rng,
                    const PipelineOutputs& out, const RowList* stream_list, void* stream) noexcept {
  dev::PipelineArgs a{logits, bf16, vocab, lay.slice_len, lay.per_thread, params,  in,
                      rng,    out,  {},    g_stamp,       nullptr,        nullptr, nullptr};
  RowParams* params_out = nullptr;
  const bool pdl = g_pipeline_pdl;
  if (host_params != nullptr) {
    if (rows <= dev::kInlineRows) {
      a.params = nullptr;
      std::memcpy(a.inline_params, host_params,
                  static_cast<std::size_t>(rows) * sizeof(RowParams));
    } else if (stream_list != nullptr && rows <= stream_inline_rows() && params != nullptr) {
      // In the streaming kernel's arguments; params is the device array the
      // kernel fills for the rows it leaves to the cluster kernel.
      params_out = const_cast<RowParams*>(params);
    } else {
      return static_cast<int>(cudaErrorInvalidValue);
    }
  }
  if (stream_list == nullptr)
    return k_first_rows
               ? launch_rows(dev::pipeline_kernel<true, false>, lay, rows, a, stream, pdl)
               : launch_rows(dev::pipeline_kernel<false, false>, lay, rows, a, stream, pdl);
  const int attr = stream_attributes();
  if (attr != 0) return attr;
  a.list = stream_list->list;
  a.count = stream_list->count;
  a.done = stream_list->done;
  const bool mod = stream_list->modified;
  const bool mass = stream_list->mass;
  dev::StreamArgs sa;  // 10 KB of kernel arguments
  sa.a = a;
  sa.params_out = params_out;
  if (params_out != nullptr)
    std::memcpy(sa.params, host_params, static_cast<std::size_t>(rows) * sizeof(RowParams));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows));
  cfg.blockDim = dim3(dev::kRowThreads);
  cfg.dynamicSmemBytes = dev::stream_smem_bytes(mod, bf16);
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute at = pdl_attribute();
  cfg.attrs = &at;
  cfg.numAttrs = pdl ? 1 : 0;
  using Bf16 = std::uint16_t;
  using Kernel = void (*)(dev::StreamArgs);
  const Kernel kernel =
      bf16 ? (mass ? (mod ? dev::stream_kernel<Bf16, true, true>
                          : dev::stream_kernel<Bf16, false, true>)
                   : (mod ? dev::stream_kernel<Bf16, true, false>
                          : dev::stream_kernel<Bf16, false, false>))
           : (mass ? (mod ? dev::stream_kernel<float, true, true>
                          : dev::stream_kernel<float, false, true>)
                   : (mod ? dev::stream_kernel<float, true, false>
                          : dev::stream_kernel<float, false, false>));
  void* args[] = {&sa};
  int err = static_cast<int>(
      cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(kernel), args));
  if (err != 0) return err;
  // One wave of clusters runs the rows left (none, usually); launched while
  // the stream still runs (pdl), it waits for it on the device.
  return launch_rows(dev::pipeline_kernel<true, true>, lay,
                     std::min<std::int64_t>(rows, std::max(lay.active, 1)), a, stream, pdl);
}

int pipeline_path_counts(unsigned long long (&out)[kPathCounters], bool reset) noexcept {
  int err = static_cast<int>(cudaMemcpyFromSymbol(out, dev::g_pipeline_paths, sizeof(out)));
  if (err != 0 || !reset) return err;
  const unsigned long long z[kPathCounters] = {};
  return static_cast<int>(cudaMemcpyToSymbol(dev::g_pipeline_paths, z, sizeof(z)));
}

int launch_logprobs(const void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                    int splits, const std::uint32_t* k, const std::int32_t* chosen, void* parts,
                    unsigned* counters, const LogprobsOutputs& out, void* stream) noexcept {
  const std::int64_t chunk = split_chunk(vocab, splits);
  const auto used = static_cast<std::int32_t>((vocab + chunk - 1) / chunk);  // <= splits
  const dev::LogprobsArgs a{
      logits, vocab, chunk, used, k, chosen, static_cast<dev::LogprobsPart*>(parts), counters, out};
  const dim3 grid(static_cast<unsigned>(used), static_cast<unsigned>(rows));
  const auto s = static_cast<cudaStream_t>(stream);
  if (bf16) {
    if (dev::rows_vectorizable(logits, vocab, 2)) {
      dev::logprobs_kernel<std::uint16_t, 8><<<grid, dev::kLpThreads, 0, s>>>(a);
    } else {
      dev::logprobs_kernel<std::uint16_t, 1><<<grid, dev::kLpThreads, 0, s>>>(a);
    }
  } else if (dev::rows_vectorizable(logits, vocab, 4)) {
    dev::logprobs_kernel<float, 4><<<grid, dev::kLpThreads, 0, s>>>(a);
  } else {
    dev::logprobs_kernel<float, 1><<<grid, dev::kLpThreads, 0, s>>>(a);
  }
  return static_cast<int>(cudaGetLastError());
}

std::size_t logprobs_part_bytes() noexcept {
  return sizeof(dev::LogprobsPart);
}

namespace {
template <typename T>
__global__ void apply_bitmask_kernel(T* logits, std::int64_t rows, std::int64_t vocab,
                                     const std::uint32_t* __restrict__ mask, std::int64_t stride) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    T* x = logits + r * vocab;
    const std::uint32_t* m = mask + r * stride;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < vocab; i += step) {
      // A warp's 32 ids share one or two mask words: the reads broadcast,
      // and only refused ids are written.
      if (((__ldg(m + (i >> 5)) >> (i & 31)) & 1U) == 0U) {
        if constexpr (sizeof(T) == 4) {
          x[i] = dev::kNegInf;
        } else {
          x[i] = 0xFF80U;  // bf16 -inf
        }
      }
    }
  }
}
}  // namespace

int launch_apply_bitmask(void* logits, bool bf16, std::int64_t rows, std::int64_t vocab,
                         const std::uint32_t* mask, std::int64_t words_per_row,
                         void* stream) noexcept {
  // About four blocks per SM in all, each row over x-blocks of 256 ids.
  const std::int64_t per_row = std::clamp<std::int64_t>(
      (4 * sm_count() + rows - 1) / rows, 1, std::max<std::int64_t>(1, (vocab + 255) / 256));
  const dim3 grid(static_cast<unsigned>(per_row),
                  static_cast<unsigned>(std::min<std::int64_t>(rows, 65535)));
  const auto s = static_cast<cudaStream_t>(stream);
  if (bf16) {
    apply_bitmask_kernel<<<grid, 256, 0, s>>>(static_cast<std::uint16_t*>(logits), rows, vocab,
                                              mask, words_per_row);
  } else {
    apply_bitmask_kernel<<<grid, 256, 0, s>>>(static_cast<float*>(logits), rows, vocab, mask,
                                              words_per_row);
  }
  return static_cast<int>(cudaGetLastError());
}

int prepare_launches(std::int64_t rows, std::int64_t vocab) noexcept {
  (void)pipeline_layout(rows, vocab);
  (void)pipeline_layout(1, vocab);
  (void)logprobs_cluster_layout(rows, vocab);
  return stream_attributes();
}

}  // namespace nextok::cuda::detail
