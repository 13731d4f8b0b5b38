// CUDA graphs and the device-resident entry points: a captured graph of
// sample_device_params + masked argmax + top_logprobs_device_k replays
// exactly what the eager calls give, and reads its inputs (logits, params,
// k, rng) at replay; rows with bad device params fail alone; the logprobs
// kernel on adversarial rows; apply_token_bitmask against the host.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "backend/cuda/launch.hpp"
#include "cuda/cuda_test_util.hpp"

namespace nextok::test {
namespace {

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// -inf logprobs (masked tokens) are equal; a difference of infinities is NaN.
bool same_logprob(float got, float want) {
  return got == want || std::fabs(got - want) <= 1e-5f;
}

std::vector<cuda::RowParams> random_params(std::mt19937_64& g, std::int64_t rows) {
  std::vector<cuda::RowParams> out;
  for (std::int64_t r = 0; r < rows; ++r) {
    auto pick = [&](auto... v) {
      const std::array vals{v...};
      return vals[g() % vals.size()];
    };
    SamplerConfig c;
    c.temperature = pick(0.0f, 0.7f, 1.0f, 1.3f);
    c.top_p = pick(1.0f, 0.9f, 0.0f);
    c.top_k = pick(0, 20, 50);
    c.min_p = pick(0.0f, 0.05f);
    c.filter_order = pick(FilterOrder::kSpec, FilterOrder::kTopKFirst);
    PenaltyConfig p;
    p.repetition_penalty = pick(1.0f, 1.1f);
    out.push_back(cuda::RowParams::from(c, p));
  }
  return out;
}

std::vector<cuda::RngState> seeds(std::int64_t rows, std::uint64_t base) {
  std::vector<cuda::RngState> out;
  for (std::int64_t r = 0; r < rows; ++r)
    out.push_back(cuda::RngState::from(Pcg32::for_seed(base + static_cast<std::uint64_t>(r))));
  return out;
}

// Everything one step writes, copied back.
struct StepOut {
  std::vector<std::int32_t> tok, st, am, am_st, lp_ids, lp_cnt, lp_st;
  std::vector<float> lp, lp_chosen;
  std::vector<cuda::RngState> rng;
  bool operator==(const StepOut& o) const {
    auto same_rng = [](const std::vector<cuda::RngState>& a, const std::vector<cuda::RngState>& b) {
      return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        return x.state == y.state && x.inc == y.inc;
      });
    };
    // Bitwise: entries past a row's count are never written (they keep the
    // buffer's 0xFF fill, a NaN).
    auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    return tok == o.tok && st == o.st && am == o.am && am_st == o.am_st && lp_ids == o.lp_ids &&
           lp_cnt == o.lp_cnt && lp_st == o.lp_st && same_bits(lp, o.lp) &&
           same_bits(lp_chosen, o.lp_chosen) && same_rng(rng, o.rng);
  }
};

// One decode step on the device, every input in device memory.
struct Step {
  std::int64_t rows, vocab;
  Batch batch;
  DevLogits logits;
  Dev<cuda::RowParams> params;
  Dev<std::uint32_t> k, mask;
  Dev<cuda::RngState> rng;
  Dev<std::int32_t> hist, hist_len;
  Dev<std::int32_t> tok, st, am, am_st, lp_ids, lp_cnt, lp_st;
  Dev<float> lp, lp_chosen;
  static constexpr std::int32_t kStride = 8;

  Step(std::mt19937_64& g, std::int64_t b, std::int64_t v, DType dt)
      : rows(b),
        vocab(v),
        batch(random_batch(g, b, v, dt)),
        logits(batch),
        params(random_params(g, b)),
        k(std::vector<std::uint32_t>(static_cast<std::size_t>(b), 5)),
        mask(random_mask(g, b, v)),
        rng(seeds(b, 1000)),
        hist(std::vector<std::int32_t>(static_cast<std::size_t>(b * kStride), 7)),
        hist_len(std::vector<std::int32_t>(static_cast<std::size_t>(b), 4)),
        tok(n()),
        st(n()),
        am(n()),
        am_st(n()),
        lp_ids(n() * kMaxTopLogprobs),
        lp_cnt(n()),
        lp_st(n()),
        lp(n() * kMaxTopLogprobs),
        lp_chosen(n()) {}

  std::size_t n() const { return static_cast<std::size_t>(rows); }
  static std::vector<std::uint32_t> random_mask(std::mt19937_64& g, std::int64_t b,
                                                std::int64_t v) {
    std::vector<std::uint32_t> m(bitmask_words(static_cast<std::size_t>(v)) *
                                 static_cast<std::size_t>(b));
    for (auto& w : m) w = static_cast<std::uint32_t>(g()) | static_cast<std::uint32_t>(g());
    return m;
  }

  void enqueue(cuda::Context& ctx, cudaStream_t s) {
    LogitsView v = logits.view;
    v.stream = s;
    cuda::PipelineInputs in;
    in.history = hist.p;
    in.history_len = hist_len.p;
    in.history_stride = kStride;
    ctx.sample_device_params(v, params.p, in, rng.p, {tok.p, st.p, nullptr});
    ctx.argmax(v, mask.p, am.p, am_st.p);
    ctx.top_logprobs_device_k(v, k.p, tok.p, {lp_ids.p, lp.p, lp_cnt.p, lp_chosen.p, lp_st.p});
  }

  StepOut read() const {
    return {tok.get(),    st.get(),    am.get(), am_st.get(),     lp_ids.get(),
            lp_cnt.get(), lp_st.get(), lp.get(), lp_chosen.get(), rng.get()};
  }
  void reset_rng() {
    const auto r = seeds(rows, 1000);
    cudaMemcpy(rng.p, r.data(), r.size() * sizeof(cuda::RngState), cudaMemcpyHostToDevice);
  }
  // New values in the same buffers: logits, params and k.
  void change(std::mt19937_64& g) {
    const Batch nb = random_batch(g, rows, vocab, batch.dtype);
    if (batch.dtype == DType::kF32) {
      cudaMemcpy(logits.f.p, nb.f32.data(), nb.f32.size() * sizeof(float), cudaMemcpyHostToDevice);
    } else {
      cudaMemcpy(logits.h.p, nb.bf16.data(), nb.bf16.size() * 2, cudaMemcpyHostToDevice);
    }
    const auto p = random_params(g, rows);
    cudaMemcpy(params.p, p.data(), p.size() * sizeof(cuda::RowParams), cudaMemcpyHostToDevice);
    const std::vector<std::uint32_t> kk(n(), 20);
    cudaMemcpy(k.p, kk.data(), kk.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
  }
};

TEST(CudaGraph, CaptureReplayMatchesEagerAndReadsInputsAtReplay) {
  ASSERT_TRUE(gpu_present()) << "no CUDA device: run this suite on a GPU machine";
  std::mt19937_64 g(2024);
  int cases = 0;
  for (bool one_read : {false, true})
    for (DType dt : {DType::kF32, DType::kBF16})
      for (std::int64_t rows : {1, 8, 64}) {  // 64: the streaming kernel, then the row list
        cuda::detail::set_logprobs_one_read(one_read);
        constexpr std::int64_t kVocab = 151936;
        Stream s;
        cuda::Context ctx;
        ctx.reserve(64, kVocab);
        Step step(g, rows, kVocab, dt);

        step.enqueue(ctx, s.s);
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        const StepOut eager = step.read();
        step.reset_rng();

        // Global mode: any allocation or synchronisation inside is an error.
        cudaGraph_t graph = nullptr;
        NEXTOK_CUDA_OK(cudaStreamBeginCapture(s.s, cudaStreamCaptureModeGlobal));
        step.enqueue(ctx, s.s);
        NEXTOK_CUDA_OK(cudaStreamEndCapture(s.s, &graph));
        cudaGraphExec_t exec = nullptr;
        NEXTOK_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        NEXTOK_CUDA_OK(cudaGraphLaunch(exec, s.s));
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        EXPECT_TRUE(step.read() == eager) << "replay differs from eager, B=" << rows;

        // The same step replayed again (the counters the kernels reset).
        step.reset_rng();
        NEXTOK_CUDA_OK(cudaGraphLaunch(exec, s.s));
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        EXPECT_TRUE(step.read() == eager) << "second replay differs, B=" << rows;

        // New logits, params and k in the same buffers: the replay reads them.
        step.change(g);
        step.reset_rng();
        step.enqueue(ctx, s.s);
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        const StepOut eager2 = step.read();
        EXPECT_FALSE(eager2 == eager);
        step.reset_rng();
        NEXTOK_CUDA_OK(cudaGraphLaunch(exec, s.s));
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        EXPECT_TRUE(step.read() == eager2) << "replay after new inputs differs, B=" << rows;
        for (std::int32_t c : eager2.lp_cnt) EXPECT_EQ(c, 20);

        // The device-params path gives what the host-params path gives.
        std::vector<cuda::RowParams> host_params(step.n());
        cudaMemcpy(host_params.data(), step.params.p, step.n() * sizeof(cuda::RowParams),
                   cudaMemcpyDeviceToHost);
        step.reset_rng();
        LogitsView v = step.logits.view;
        v.stream = s.s;
        cuda::PipelineInputs in;
        in.history = step.hist.p;
        in.history_len = step.hist_len.p;
        in.history_stride = Step::kStride;
        ctx.sample(v, host_params, in, step.rng.p, {step.tok.p, step.st.p, nullptr});
        NEXTOK_CUDA_OK(cudaStreamSynchronize(s.s));
        EXPECT_EQ(step.tok.get(), eager2.tok);
        EXPECT_EQ(step.st.get(), eager2.st);

        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        ++cases;
      }
  cuda::detail::set_logprobs_one_read(true);  // the default
  EXPECT_EQ(cases, 12);
}

TEST(CudaGraph, BadDeviceParamsFailOnlyTheirRow) {
  ASSERT_TRUE(gpu_present()) << "no CUDA device: run this suite on a GPU machine";
  std::mt19937_64 g(77);
  for (std::int64_t rows : {8, 64}) {
    constexpr std::int64_t kVocab = 32000;
    Batch b = random_batch(g, rows, kVocab, DType::kF32);
    DevLogits dl(b);
    auto params = random_params(g, rows);
    const auto good = params;
    params[2].temperature = NAN;
    params[3].top_k = -1;
    params[4].filter_order = FilterOrder::kMlxLm;
    params[5].temperature = 1e-7f;  // the greedy range: must be passed as 0
    params[6].repetition_penalty = 0.0f;
    params[7].min_p = 1.5f;
    Dev<cuda::RowParams> d_params(params);
    Dev<cuda::RngState> d_rng(seeds(rows, 5)), d_rng_ref(seeds(rows, 5));
    const auto n = static_cast<std::size_t>(rows);
    Dev<std::int32_t> tok(n), st(n), tok_ref(n), st_ref(n);
    Dev<float> probs(n * kVocab);
    cuda::Context ctx;
    ctx.sample_device_params(dl.view, d_params.p, {}, d_rng.p, {tok.p, st.p, probs.p});
    // Reference for the valid rows: the host-checked path on valid params.
    ctx.sample(dl.view, good, {}, d_rng_ref.p, {tok_ref.p, st_ref.p, nullptr});
    NEXTOK_CUDA_OK(cudaDeviceSynchronize());
    const auto t = tok.get(), s = st.get(), tr = tok_ref.get(), sr = st_ref.get();
    const auto pr = probs.get();
    for (std::size_t r = 0; r < n; ++r) {
      if (r >= 2 && r <= 7) {
        EXPECT_EQ(s[r], static_cast<std::int32_t>(cuda::RowStatus::kInvalidParams)) << r;
        EXPECT_EQ(t[r], -1);
        double mass = 0;
        for (std::int64_t i = 0; i < kVocab; ++i)
          mass += pr[r * kVocab + static_cast<std::size_t>(i)];
        EXPECT_EQ(mass, 0.0) << "row " << r << " of B=" << rows;
      } else {
        EXPECT_EQ(s[r], sr[r]) << r;
        EXPECT_EQ(t[r], tr[r]) << r;
      }
    }
    // k > 20 on the device fails its row only.
    std::vector<std::uint32_t> k(n, 3);
    k[1] = 21;
    Dev<std::uint32_t> d_k(k);
    Dev<std::int32_t> ids(n * kMaxTopLogprobs), cnt(n), lst(n);
    Dev<float> lp(n * kMaxTopLogprobs), ch(n);
    ctx.top_logprobs_device_k(dl.view, d_k.p, tok_ref.p, {ids.p, lp.p, cnt.p, ch.p, lst.p});
    NEXTOK_CUDA_OK(cudaDeviceSynchronize());
    const auto ls = lst.get(), lc = cnt.get();
    EXPECT_EQ(ls[1], static_cast<std::int32_t>(cuda::RowStatus::kInvalidParams));
    EXPECT_EQ(lc[1], 0);
    EXPECT_EQ(ls[0], 0);
    EXPECT_EQ(lc[0], 3);
  }
}

// Rows that stress the logprobs kernel's lists and normaliser: ascending
// (every id enters a list), descending, all equal (ties to the lowest ids),
// +-0 mixed, almost all -inf, and the error rows; on the vector path
// (V % 8 == 0) and the element path (odd V), against the host.
TEST(CudaLogprobs, HardRowsMatchHost) {
  ASSERT_TRUE(gpu_present()) << "no CUDA device: run this suite on a GPU machine";
  std::mt19937_64 g(31);
  cuda::Context ctx;
  std::int64_t checked = 0, bad = 0;
  for (bool one_read : {false, true})
    for (std::int64_t vocab : {151936, 151937, 1000, 33})
      for (DType dt : {DType::kF32, DType::kBF16}) {
        cuda::detail::set_logprobs_one_read(one_read);
        constexpr std::int64_t kRows = 9;
        Batch b;
        b.rows = kRows;
        b.vocab = vocab;
        b.dtype = dt;
        b.f32.resize(static_cast<std::size_t>(kRows * vocab));
        for (std::int64_t r = 0; r < kRows; ++r)
          for (std::int64_t i = 0; i < vocab; ++i) {
            const auto fi = static_cast<float>(i);
            const auto fv = static_cast<float>(vocab);
            float x = 0.0f;
            switch (r) {
              case 0:
                x = fi / fv * 30.0f;
                break;  // ascending
              case 1:
                x = (fv - fi) / fv * 30.0f;
                break;  // descending
              case 2:
                x = 1.5f;
                break;  // all equal
              case 3:
                x = (i % 2 == 0) ? 0.0f : -0.0f;
                break;
              case 4:
                x = i % 997 == 5 ? 2.0f : -INFINITY;
                break;
              case 5:
                x = i == vocab / 3 ? NAN : 0.25f;
                break;
              case 6:
                x = i == vocab - 1 ? INFINITY : 0.0f;
                break;
              case 7:
                x = -INFINITY;
                break;
              default:
                x = static_cast<float>(g() % 7) - 3.0f;
                break;  // many ties
            }
            b.f32[static_cast<std::size_t>(r * vocab + i)] = x;
          }
        if (dt == DType::kBF16) round_to_bf16(b);
        DevLogits dl(b);
        for (std::uint32_t kk : {1U, 7U, 20U}) {
          const std::vector<std::uint32_t> k(kRows, kk);
          std::vector<std::int32_t> chosen(kRows);
          for (auto& c : chosen)
            c = static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(vocab));
          Dev<std::int32_t> d_chosen(chosen);
          Dev<std::int32_t> ids(kRows * kMaxTopLogprobs), cnt(kRows), st(kRows);
          Dev<float> lp(kRows * kMaxTopLogprobs), clp(kRows);
          ctx.top_logprobs(dl.view, k, d_chosen.p, {ids.p, lp.p, cnt.p, clp.p, st.p});
          NEXTOK_CUDA_OK(cudaDeviceSynchronize());
          const auto gi = ids.get(), gc = cnt.get(), gs = st.get();
          const auto gl = lp.get(), gcl = clp.get();
          for (std::int64_t r = 0; r < kRows; ++r) {
            const auto i = static_cast<std::size_t>(r);
            ++checked;
            cuda::RowStatus want_st = cuda::RowStatus::kOk;
            std::optional<TokenLogprobs> want;
            try {
              want = compute_top_logprobs(b.host_row(r), chosen[i], kk);
            } catch (const Error& e) {
              want_st = expected_status(e.code());
            }
            bool ok = gs[i] == static_cast<std::int32_t>(want_st);
            if (ok && want_st == cuda::RowStatus::kOk) {
              ok = gc[i] == static_cast<std::int32_t>(want->top.size());
              for (std::size_t j = 0; ok && j < want->top.size(); ++j)
                ok = gi[i * kMaxTopLogprobs + j] == want->top[j].token_id &&
                     same_logprob(gl[i * kMaxTopLogprobs + j], want->top[j].logprob);
              ok = ok && same_logprob(gcl[i], want->token_logprob);
            }
            if (!ok && ++bad < 10)
              std::printf(
                  "hard logprobs row %lld V=%lld %s k=%u: gpu status %d count %d chosen %g;"
                  " host status %d count %d chosen %g\n",
                  static_cast<long long>(r), static_cast<long long>(vocab),
                  dt == DType::kF32 ? "f32" : "bf16", kk, gs[i], gc[i], static_cast<double>(gcl[i]),
                  static_cast<int>(want_st), want ? static_cast<int>(want->top.size()) : -1,
                  want ? static_cast<double>(want->token_logprob) : 0.0);
          }
        }
      }
  cuda::detail::set_logprobs_one_read(true);  // the default
  std::printf("hard logprobs rows: %lld, mismatches %lld\n", static_cast<long long>(checked),
              static_cast<long long>(bad));
  EXPECT_EQ(checked, 2 * 4 * 2 * 3 * 9);
  EXPECT_EQ(bad, 0);
}

TEST(CudaApi, ApplyTokenBitmaskMatchesHost) {
  ASSERT_TRUE(gpu_present()) << "no CUDA device: run this suite on a GPU machine";
  std::mt19937_64 g(5);
  cuda::Context ctx;
  for (std::int64_t vocab : {151936, 1001})
    for (DType dt : {DType::kF32, DType::kBF16}) {
      constexpr std::int64_t kRows = 5;
      const std::int64_t words = (vocab + 31) / 32 + 3;  // padded rows, as engines allocate
      Batch b = random_batch(g, kRows, vocab, dt);
      std::vector<std::uint32_t> mask(static_cast<std::size_t>(kRows * words));
      for (auto& w : mask) w = static_cast<std::uint32_t>(g());
      DevLogits dl(b);
      Dev<std::uint32_t> d_mask(mask);
      void* data = dt == DType::kF32 ? static_cast<void*>(dl.f.p) : static_cast<void*>(dl.h.p);
      ctx.apply_token_bitmask(data, dt, kRows, vocab, d_mask.p, words, nullptr);
      NEXTOK_CUDA_OK(cudaDeviceSynchronize());
      std::int64_t wrong = 0;
      const auto f = dl.f.get();
      const auto h = dl.h.get();
      for (std::int64_t r = 0; r < kRows; ++r)
        for (std::int64_t i = 0; i < vocab; ++i) {
          const auto at = static_cast<std::size_t>(r * vocab + i);
          const bool allowed =
              ((mask[static_cast<std::size_t>(r * words + i / 32)] >> (i % 32)) & 1U) != 0U;
          const float got = dt == DType::kF32 ? f[at] : cpu::bf16_to_f32(h[at]);
          const float want = allowed ? b.f32[at] : -INFINITY;
          wrong += got == want ? 0 : 1;
        }
      EXPECT_EQ(wrong, 0) << "V=" << vocab;
      try {
        ctx.apply_token_bitmask(data, dt, kRows, vocab, d_mask.p, (vocab + 31) / 32 - 1, nullptr);
        ADD_FAILURE() << "a short bitmask row was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
      }
    }
}

}  // namespace
}  // namespace nextok::test
