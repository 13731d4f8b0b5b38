// The attention kernels of every ISA against the scalar reference, bit for
// bit: row dots, lane-split weighted sums of fp16 rows, fp16 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/cpu/attention_kernels.hpp"
#include "model/cpu/quant.hpp"
#include "model/cpu/quant_impl.hpp"

using namespace nextok::model;

namespace {

std::vector<const AttentionKernels*> isas() {
  std::vector<const AttentionKernels*> k{&attention_kernels_scalar()};
#if defined(__x86_64__) || defined(_M_X64)
  if (quant::avx2_kernels() != nullptr) k.push_back(attention_kernels_avx2());
#endif
  return k;
}

std::vector<std::uint16_t> halves(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = f32_to_fp16(d(rng));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(AttentionKernels, EveryIsaEqualsTheScalarOrder) {
  const auto k = isas();
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  // Widths below, at and past one 64-wide block; row counts around the
  // 4-row groups; lanes as a prompt batch (8) and a single token (32) use.
  for (std::size_t n : {8u, 64u, 72u, 128u}) {
    for (std::size_t count : {1u, 3u, 4u, 9u, 33u, 100u}) {
      const std::size_t stride = n + 16;
      const auto rows = halves(count * stride, rng);
      std::vector<float> b(n), w(count);
      for (auto& x : b) x = d(rng);
      for (auto& x : w) x = std::abs(d(rng)) / static_cast<float>(count);
      std::vector<float> ref(count);
      k[0]->dots_f16_lanes8(n, rows.data(), stride, count, b.data(), ref.data());
      // The reference is the documented sum: lanes i % 8, then reduce_lanes8.
      for (std::size_t r = 0; r < count; ++r) {
        float l[8] = {};
        for (std::size_t i = 0; i < n; ++i) {
          l[i % 8] = std::fma(fp16_to_f32(rows[r * stride + i]), b[i], l[i % 8]);
        }
        const float want = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
        ASSERT_EQ(ref[r], want) << "n " << n << " row " << r;
      }
      for (std::size_t lanes : {8u, 32u}) {
        std::vector<float> ref_acc(lanes * n, -1.0f);
        k[0]->weighted_sum_f16(n, w.data(), rows.data(), stride, count, lanes, ref_acc.data());
        for (std::size_t i = 0; i < n; ++i) {  // lane 0 by hand
          float a = 0.0f;
          for (std::size_t j = 0; j < count; j += lanes) {
            a = std::fma(w[j], fp16_to_f32(rows[j * stride + i]), a);
          }
          ASSERT_EQ(ref_acc[i], a) << "n " << n << " i " << i;
        }
        // Several weight rows over the same values (GQA heads).
        for (std::size_t nq : {2u, 3u, 4u, 7u, 9u}) {
          const std::size_t w_stride = count + 5;
          std::vector<float> ws(nq * w_stride);
          for (auto& x : ws) x = std::abs(d(rng)) / static_cast<float>(count);
          for (const auto* ki : k) {
            std::vector<float> got(nq * lanes * n, -1.0f);
            ki->weighted_sum_f16_multi(n, ws.data(), w_stride, nq, rows.data(), stride, count,
                                       lanes, got.data());
            for (std::size_t q = 0; q < nq; ++q) {
              std::vector<float> one(lanes * n);
              k[0]->weighted_sum_f16(n, ws.data() + q * w_stride, rows.data(), stride, count, lanes,
                                     one.data());
              const auto at = got.begin() + static_cast<std::ptrdiff_t>(q * lanes * n);
              EXPECT_TRUE(same_bits(
                  std::vector<float>(at, at + static_cast<std::ptrdiff_t>(lanes * n)), one))
                  << "multi weighted sum, n " << n << " nq " << nq << " q " << q;
            }
          }
        }
        for (std::size_t isa = 1; isa < k.size(); ++isa) {
          std::vector<float> got(lanes * n, -1.0f);
          k[isa]->weighted_sum_f16(n, w.data(), rows.data(), stride, count, lanes, got.data());
          EXPECT_TRUE(same_bits(got, ref_acc)) << "weighted sum, n " << n << " count " << count
                                               << " lanes " << lanes << " isa " << isa;
        }
      }
      for (std::size_t isa = 1; isa < k.size(); ++isa) {
        std::vector<float> got(count);
        k[isa]->dots_f16_lanes8(n, rows.data(), stride, count, b.data(), got.data());
        EXPECT_TRUE(same_bits(got, ref)) << "dots, n " << n << " count " << count;
      }
      // Several queries at once (GQA): each query's row equals its own dots.
      for (std::size_t nq : {1u, 2u, 3u, 5u}) {
        std::vector<float> qs(nq * n);
        for (auto& x : qs) x = d(rng);
        const std::size_t out_stride = count + 3;
        for (const auto* ki : k) {
          std::vector<float> got(nq * out_stride, -1.0f);
          ki->dots_f16_lanes8_multi(n, rows.data(), stride, count, qs.data(), nq, got.data(),
                                    out_stride);
          for (std::size_t q = 0; q < nq; ++q) {
            std::vector<float> one(count);
            k[0]->dots_f16_lanes8(n, rows.data(), stride, count, qs.data() + q * n, one.data());
            const std::vector<float> row(
                got.begin() + static_cast<std::ptrdiff_t>(q * out_stride),
                got.begin() + static_cast<std::ptrdiff_t>(q * out_stride + count));
            EXPECT_TRUE(same_bits(row, one)) << "multi dots, nq " << nq << " q " << q;
          }
        }
      }
    }
  }
}

TEST(AttentionKernels, Fp16RoundingEqualsTheSoftwareConversion) {
  const auto k = isas();
  std::mt19937 rng(11);
  std::vector<float> x;
  // Softmax weights: normal, subnormal-in-fp16 and zero, plus odd tails.
  for (int e = -30; e <= 0; ++e) {
    for (int m = 0; m < 7; ++m) {
      x.push_back(std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, e));
    }
  }
  x.push_back(0.0f);
  x.push_back(1.0f);
  x.push_back(65504.0f);
  for (const auto* ki : k) {
    std::vector<float> got = x;
    ki->round_f16(got.data(), got.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(got[i], fp16_to_f32(f32_to_fp16(x[i]))) << x[i];
    }
  }
}
