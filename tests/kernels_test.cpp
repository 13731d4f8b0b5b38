// Every ISA's kernels agree bit for bit with the scalar ones, and the exp
// is accurate against the C library.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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

// Compares every kernel of k with the scalar one on x (NaN-free for max and
// exp), its bf16 rounding, and with no mask and the given masks.
static void expect_same_as_scalar(const cpu::Kernels& k, const std::vector<float>& x,
                                  const std::vector<const std::uint32_t*>& masks,
                                  float shift_offset) {
  const auto& ref = cpu::scalar_kernels();
  const std::size_t n = x.size();
  const float ladder[cpu::kLadderLevels] = {0.1f, 0.01f, 1e-4f, 1e-8f};
  std::vector<std::uint16_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = cpu::f32_to_bf16(x[i]);
  std::vector<float> xn = x;  // with NaNs for argmax and load
  for (std::size_t i = 3; i < n; i += 41) xn[i] = NAN;
  std::vector<std::uint16_t> bn(n);
  for (std::size_t i = 0; i < n; ++i) bn[i] = cpu::f32_to_bf16(xn[i]);
  auto same_argmax = [&](cpu::ArgmaxResult a, cpu::ArgmaxResult c, const char* what) {
    EXPECT_EQ(a.index, c.index) << k.name << " " << what << " n=" << n;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.value), std::bit_cast<std::uint32_t>(c.value))
        << k.name << " " << what << " n=" << n;
    EXPECT_EQ(a.has_nan, c.has_nan) << k.name << " " << what << " n=" << n;
  };
  std::vector<const std::uint32_t*> all = masks;
  all.insert(all.begin(), nullptr);
  for (const std::uint32_t* m : all) {
    for (const std::vector<float>* v : std::array<const std::vector<float>*, 2>{&x, &xn}) {
      same_argmax(ref.argmax_f32(v->data(), n, m), k.argmax_f32(v->data(), n, m), "argmax_f32");
      std::vector<float> d1(n + 1, 7.0f), d2(n + 1, 7.0f);  // one past the end stays untouched
      EXPECT_EQ(ref.load_f32(v->data(), n, m, d1.data()), k.load_f32(v->data(), n, m, d2.data()))
          << k.name << " n=" << n;
      EXPECT_EQ(0, std::memcmp(d1.data(), d2.data(), d1.size() * sizeof(float)))
          << k.name << " load_f32 n=" << n;
    }
    for (const std::vector<std::uint16_t>* v :
         std::array<const std::vector<std::uint16_t>*, 2>{&b, &bn}) {
      same_argmax(ref.argmax_bf16(v->data(), n, m), k.argmax_bf16(v->data(), n, m), "argmax_bf16");
      std::vector<float> d1(n + 1, 7.0f), d2(n + 1, 7.0f);
      EXPECT_EQ(ref.load_bf16(v->data(), n, m, d1.data()), k.load_bf16(v->data(), n, m, d2.data()))
          << k.name << " n=" << n;
      EXPECT_EQ(0, std::memcmp(d1.data(), d2.data(), d1.size() * sizeof(float)))
          << k.name << " load_bf16 n=" << n;
    }
  }
  EXPECT_EQ(ref.max_f32(x.data(), n), k.max_f32(x.data(), n)) << k.name << " n=" << n;
  const float mx = ref.max_f32(x.data(), n);
  const float shift = (n > 0 ? mx / 0.7f : 0.0f) + shift_offset;
  std::vector<float> e1(n + 1, 7.0f), e2(n + 1, 7.0f);
  const std::size_t nb = (n + cpu::kSumBlock - 1) / cpu::kSumBlock;
  std::vector<double> s1(nb + 1, 7.0), s2(nb + 1, 7.0);
  for (const float* lad : {static_cast<const float*>(nullptr), static_cast<const float*>(ladder)}) {
    const cpu::ExpParams p{1.0f / 0.7f, shift, lad};
    const auto r1 = ref.exp_weights(x.data(), n, p, e1.data(), s1.data());
    const auto r2 = k.exp_weights(x.data(), n, p, e2.data(), s2.data());
    EXPECT_EQ(0, std::memcmp(e1.data(), e2.data(), e1.size() * sizeof(float)))
        << k.name << " exp n=" << n << " offset=" << shift_offset;
    EXPECT_EQ(s1, s2) << k.name << " n=" << n;
    EXPECT_EQ(r1.total, r2.total) << k.name << " n=" << n << " offset=" << shift_offset;
    EXPECT_EQ(r1.count, r2.count) << k.name << " n=" << n;
    // Without the optional outputs the result is the same.
    const auto r3 = k.exp_weights(x.data(), n, p, nullptr, nullptr);
    EXPECT_EQ(r1.total, r3.total) << k.name << " n=" << n;
    EXPECT_EQ(r1.count, r3.count) << k.name << " n=" << n;
  }
  for (const float thr : {0.01f, 0.0f, 2.0f}) {
    std::vector<std::int32_t> i1(n + 1, -7), i2(n + 1, -7);
    const auto c1 = ref.indices_ge(e1.data(), n, thr, i1.data());
    const auto c2 = k.indices_ge(e1.data(), n, thr, i2.data());
    ASSERT_EQ(c1, c2) << k.name << " n=" << n;
    EXPECT_EQ(i1, i2) << k.name << " indices_ge n=" << n;
  }
  // band_split over the weights (zeros included): same mass bits, same ids;
  // and the ids are exactly the band, the mass the sum above it.
  for (const auto& [lo, hi] : std::array<std::pair<float, float>, 4>{
           {{0.01f, 0.5f}, {0.0f, 0.0f}, {1e-30f, INFINITY}, {0.3f, 0.3f}}}) {
    std::vector<std::int32_t> i1(n + 1, -7), i2(n + 1, -7);
    std::vector<double> b1(nb + 1, 7.0), b2(nb + 1, 7.0);
    double m1 = -1.0, m2 = -2.0;
    const auto c1 = ref.band_split(e1.data(), n, lo, hi, &m1, b1.data(), i1.data());
    const auto c2 = k.band_split(e1.data(), n, lo, hi, &m2, b2.data(), i2.data());
    ASSERT_EQ(c1, c2) << k.name << " band_split n=" << n;
    i1.resize(c1);  // past the count is scratch
    i2.resize(c2);
    EXPECT_EQ(i1, i2) << k.name << " band_split n=" << n;
    EXPECT_EQ(b1, b2) << k.name << " band_split block sums n=" << n;
    EXPECT_EQ(b2[nb], 7.0) << k.name << " band_split wrote past the blocks";
    double m3 = -3.0;
    k.band_split(e1.data(), n, lo, hi, &m3, nullptr, i2.data());
    EXPECT_EQ(m1, m3) << k.name << " band_split without block sums";
    EXPECT_EQ(m1, m2) << k.name << " band_split mass n=" << n;
    std::size_t want = 0;
    double mass = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      want += e1[i] >= lo && e1[i] <= hi ? 1 : 0;
      mass += e1[i] > hi ? static_cast<double>(e1[i]) : 0.0;
    }
    EXPECT_EQ(c1, want) << " band_split n=" << n;
    EXPECT_NEAR(m1, mass, 1e-12 * (1.0 + mass)) << " band_split n=" << n;
  }
}

TEST(Kernels, AllIsasAgreeBitForBit) {
  std::mt19937_64 g(11);
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 70; ++n) sizes.push_back(n);
  for (std::size_t n : {95u, 96u, 97u, 127u, 128u, 129u, 1023u, 1024u, 1025u, 1031u, 1039u, 1040u,
                        2048u, 4099u, 151936u, 262144u + 9u})
    sizes.push_back(n);
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    for (std::size_t n : sizes) {
      std::vector<float> x = data(g, n);
      for (std::size_t i = 2; i < n; i += 53) x[i] = -INFINITY;  // masked tokens reach exp as -Inf
      const std::size_t words = (n + 31) / 32;
      std::vector<std::uint32_t> random(words), none(words, 0U), high(words), ones(words, ~0U);
      for (auto& w : random) w = static_cast<std::uint32_t>(g());
      for (auto& w : high) w = 0xFFFF0000U;  // only the upper half of each word
      expect_same_as_scalar(*k, x, {random.data(), none.data(), high.data(), ones.data()}, 0.0f);
    }
  }
}

// Exponents above the clamp (e^x saturates at e^88) and deep in the
// underflow range take the same path as scalar in every ISA.
TEST(Kernels, AllIsasAgreeOutsideTheUsualRange) {
  std::mt19937_64 g(12);
  for (const cpu::Kernels* k : cpu::available_kernels()) {
    for (std::size_t n : {16u, 37u, 1100u}) {
      const std::vector<float> x = data(g, n);
      for (float offset : {-120.0f, -95.0f, -60.0f, 30.0f, 90.0f}) {
        expect_same_as_scalar(*k, x, {}, offset);
      }
    }
  }
}

TEST(Kernels, ActiveSetFollowsForceIsa) {
  const char* force = std::getenv("NEXTOK_FORCE_ISA");
  const std::string want = force != nullptr ? force : "";
  const auto avail = cpu::available_kernels();
  const char* widest = avail.back()->name;
  const char* got = cpu::active_kernels().name;
  if (want == "scalar") {
    EXPECT_STREQ(got, "scalar");
  } else if (want == "avx2") {
    EXPECT_STREQ(got, cpu::avx2_kernels() != nullptr ? "avx2" : "scalar");
  } else {
    EXPECT_STREQ(got, widest);  // avx512, unset or unknown: the widest set
  }
  for (const cpu::Kernels* k : avail) EXPECT_NE(k, nullptr);
  EXPECT_EQ(cpu::avx512_kernels() != nullptr, std::string(widest) == "avx512");
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
