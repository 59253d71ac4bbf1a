// Tests of runtime/linear_rows: few-row linear layers on [N, K] and [K, N] weights, f32 and bf16,
// against a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "runtime/linear_rows.h"

namespace af::runtime {
namespace {

/// bf16 bits of `f`, rounded to nearest even (the reference's inputs are exact bf16 values).
uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t v) {
  const uint32_t u = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// One problem: x [m, k] (rows ldx apart), W stored NK [n, k] or KN [k, n] (rows ldw apart),
/// bias [n]; values held as float, exact in bf16 where the type is BF16.
struct Case {
  LinearRowsType type;
  WeightLayout layout;
  int64_t m, n, k;
  std::vector<float> x, w, b;
  int64_t ldx, ldw;

  Case(LinearRowsType t, WeightLayout l, int64_t m_, int64_t n_, int64_t k_, std::mt19937& rng)
      : type(t), layout(l), m(m_), n(n_), k(k_), ldx(k_ + 3), ldw((l == WeightLayout::NK ? k_ : n_) + 5) {
    std::normal_distribution<float> d;
    const auto draw = [&] {
      const float v = d(rng);
      return type == LinearRowsType::BF16 ? from_bf16(to_bf16(v)) : v;
    };
    x.resize(static_cast<size_t>(m * ldx));
    w.resize(static_cast<size_t>((layout == WeightLayout::NK ? n : k) * ldw));
    b.resize(static_cast<size_t>(n));
    for (auto& v : x) v = draw();
    for (auto& v : w) v = draw();
    for (auto& v : b) v = draw();
  }

  float weight(int64_t j, int64_t kk) const {  // W^T's (kk, j): the weight of input kk to output j
    return layout == WeightLayout::NK ? w[j * ldw + kk] : w[kk * ldw + j];
  }

  /// y from linear_rows, as floats.
  std::vector<float> run(bool bias, int threads) const {
    std::vector<float> y(static_cast<size_t>(m * n));
    if (type == LinearRowsType::F32) {
      linear_rows(type, layout, x.data(), ldx, w.data(), ldw, bias ? b.data() : nullptr, y.data(), m, n, k,
                  threads);
      return y;
    }
    const auto pack = [](const std::vector<float>& v) {
      std::vector<uint16_t> o(v.size());
      for (size_t i = 0; i < v.size(); ++i) o[i] = to_bf16(v[i]);
      return o;
    };
    const auto xb = pack(x), wb = pack(w), bb = pack(b);
    std::vector<uint16_t> yb(y.size());
    linear_rows(type, layout, xb.data(), ldx, wb.data(), ldw, bias ? bb.data() : nullptr, yb.data(), m, n, k,
                threads);
    for (size_t i = 0; i < y.size(); ++i) y[i] = from_bf16(yb[i]);
    return y;
  }

  /// Checks y against the double sums: f32 within K ulps of the sum of magnitudes, bf16 within
  /// one rounding of the result on top of that.
  void check(const std::vector<float>& y, bool bias) const {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double exact = bias ? b[j] : 0.0, mag = std::fabs(exact);
        for (int64_t kk = 0; kk < k; ++kk) {
          const double p = static_cast<double>(x[i * ldx + kk]) * weight(j, kk);
          exact += p;
          mag += std::fabs(p);
        }
        double tol = mag * static_cast<double>(k + 1) * 6e-8;
        if (type == LinearRowsType::BF16) tol += std::fabs(exact) * (1.0 / 256) + 1e-30;
        ASSERT_NEAR(y[i * n + j], exact, tol)
            << "m=" << m << " n=" << n << " k=" << k << " row " << i << " col " << j
            << (layout == WeightLayout::KN ? " KN" : " NK") << (bias ? " bias" : "");
      }
  }
};

TEST(LinearRows, MatchesDoubleSumsForEveryRowCountLayoutAndTail) {
  std::mt19937 rng(7);
  for (LinearRowsType type : {LinearRowsType::F32, LinearRowsType::BF16}) {
    if (!linear_rows_supported(type)) continue;
    for (WeightLayout layout : {WeightLayout::NK, WeightLayout::KN})
      for (int64_t m : {1, 2, 3, 4, 5, 7, 8, 9, 13})
        for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {17, 31}, {40, 64}, {33, 129}, {1100, 5}}) {
          const Case c(type, layout, m, n, k, rng);
          for (bool bias : {true, false})
            for (int threads : {1, 2, 3}) c.check(c.run(bias, threads), bias);
        }
  }
}

TEST(LinearRows, PaysOnlyForFewRows) {
  for (LinearRowsType type : {LinearRowsType::F32, LinearRowsType::BF16}) {
    EXPECT_TRUE(linear_rows_pays(type, WeightLayout::NK, 1, 768));
    EXPECT_FALSE(linear_rows_pays(type, WeightLayout::NK, 13, 64));
    EXPECT_FALSE(linear_rows_pays(type, WeightLayout::NK, 8, 4096));  // x's rows leave L1
    EXPECT_TRUE(linear_rows_pays(type, WeightLayout::KN, 4, 3072));
    EXPECT_FALSE(linear_rows_pays(type, WeightLayout::KN, 5, 768));
  }
}

TEST(LinearRows, RejectsSizesItCannotRead) {
  if (!linear_rows_supported(LinearRowsType::F32)) GTEST_SKIP() << "no AVX-512F";
  std::vector<float> x(8), w(8), y(8);
  EXPECT_THROW(linear_rows(LinearRowsType::F32, WeightLayout::NK, x.data(), 4, w.data(), 2, nullptr, y.data(), 1,
                           2, 4, 1),
               std::invalid_argument);  // W's rows closer than K
  EXPECT_THROW(linear_rows(LinearRowsType::F32, WeightLayout::KN, x.data(), 4, w.data(), 1, nullptr, y.data(), 1,
                           2, 4, 1),
               std::invalid_argument);  // W's rows closer than N
}

}  // namespace
}  // namespace af::runtime
