// Every ISA's kernels agree bit for bit with the scalar ones, and the exp
// is accurate against the C library.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "backend/cpu/bf16.hpp"
#include "backend/cpu/exp_f32.hpp"
#include "backend/cpu/kernels.hpp"

namespace cpu = nextok::cpu;

namespace {

std::vector<float> data(std::mt19937_64& g, std::size_t n) {
  std::normal_distribution<float> d(0.0f, 4.0f);
  std::vector<float> x(n);
  for (float& v : x) v = std::round(d(g) * 4.0f) / 4.0f;  // ties on purpose
  // A few far-below values take the subnormal / underflow branch of exp.
  for (std::size_t i = 5; i < n; i += 97) x[i] = -70.0f - static_cast<float>(i % 60);
  return x;
}

}  // namespace

TEST(Kernels, AvailableOnThisMachine) {
  ASSERT_GE(cpu::available_kernels().size(), 1u);
  EXPECT_STREQ(cpu::available_kernels()[0]->name, "scalar");
}

TEST(Kernels, ExpIsAccurateAcrossTheRange) {
  for (float x = -103.9f; x <= 88.0f; x += 0.0137f) {
    const double ref = std::exp(static_cast<double>(x));
    const float got = cpu::expc::exp_f32(x);
    if (ref < 1.2e-38) {  // subnormal: absolute error within a few subnormal ulps
      EXPECT_NEAR(got, ref, 4 * 1.4e-45) << x;
    } else {
      EXPECT_NEAR(got / ref, 1.0, 3e-7) << x;
    }
  }
  EXPECT_EQ(cpu::expc::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(cpu::expc::exp_f32(-INFINITY), 0.0f);
  EXPECT_EQ(cpu::expc::exp_f32(-200.0f), 0.0f);
}

TEST(Kernels, AllIsasAgreeBitForBit) {
  std::mt19937_64 g(11);
  const auto& ref = cpu::scalar_kernels();
  const float ladder[cpu::kLadderLevels] = {0.1f, 0.01f, 1e-4f, 1e-8f};
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    for (std::size_t n : {1u, 7u, 8u, 33u, 1023u, 1024u, 1025u, 4099u, 151936u}) {
      std::vector<float> x = data(g, n);
      std::vector<std::uint32_t> mask((n + 31) / 32);
      for (auto& w : mask) w = static_cast<std::uint32_t>(g());
      std::vector<std::uint16_t> b(n);
      for (std::size_t i = 0; i < n; ++i) b[i] = cpu::f32_to_bf16(x[i]);

      for (const std::uint32_t* m : {static_cast<const std::uint32_t*>(nullptr), static_cast<const std::uint32_t*>(mask.data())}) {
        const auto a1 = ref.argmax_f32(x.data(), n, m), a2 = k->argmax_f32(x.data(), n, m);
        EXPECT_EQ(a1.index, a2.index) << k->name << " n=" << n;
        const auto b1 = ref.argmax_bf16(b.data(), n, m), b2 = k->argmax_bf16(b.data(), n, m);
        EXPECT_EQ(b1.index, b2.index) << k->name << " n=" << n;
        std::vector<float> d1(n), d2(n);
        ref.load_bf16(b.data(), n, m, d1.data());
        k->load_bf16(b.data(), n, m, d2.data());
        EXPECT_EQ(d1, d2);
      }
      EXPECT_EQ(ref.max_f32(x.data(), n), k->max_f32(x.data(), n));
      const float mx = ref.max_f32(x.data(), n);
      std::vector<float> e1(n), e2(n);
      std::vector<double> s1((n + cpu::kSumBlock - 1) / cpu::kSumBlock), s2(s1.size());
      const cpu::ExpParams p{1.0f / 0.7f, mx / 0.7f, ladder};
      const auto r1 = ref.exp_weights(x.data(), n, p, e1.data(), s1.data());
      const auto r2 = k->exp_weights(x.data(), n, p, e2.data(), s2.data());
      EXPECT_EQ(e1, e2) << k->name;
      EXPECT_EQ(s1, s2) << k->name;
      EXPECT_EQ(r1.total, r2.total) << k->name;
      EXPECT_EQ(r1.count, r2.count) << k->name;
      std::vector<std::int32_t> i1(n), i2(n);
      const auto c1 = ref.indices_ge(e1.data(), n, 0.01f, i1.data());
      const auto c2 = k->indices_ge(e1.data(), n, 0.01f, i2.data());
      ASSERT_EQ(c1, c2);
      EXPECT_TRUE(std::equal(i1.begin(), i1.begin() + static_cast<std::ptrdiff_t>(c1), i2.begin()));
    }
  }
}

TEST(Kernels, ArgmaxTiesGoToLowestIndexAndFlagNan) {
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    std::vector<float> x(100, 1.0f);
    x[37] = 5.0f;
    x[91] = 5.0f;
    x[12] = 5.0f;
    EXPECT_EQ(k->argmax_f32(x.data(), x.size(), nullptr).index, 12) << k->name;
    x[50] = NAN;
    EXPECT_TRUE(k->argmax_f32(x.data(), x.size(), nullptr).has_nan) << k->name;
    std::vector<float> neg(40, -INFINITY);
    EXPECT_EQ(k->argmax_f32(neg.data(), neg.size(), nullptr).index, -1) << k->name;
  }
}
