// Reference GEMM (kernels/reference/gemm.h): hand-checked products and a sweep of
// transposes, leading dims, alpha, beta and row ranges against a naive triple loop.
#include "kernels/reference/gemm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using test::Lcg;
using test::random_floats;

GemmParams params(int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  GemmParams p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.trans_a = ta;
  p.trans_b = tb;
  p.lda = ta ? m : k;
  p.ldb = tb ? k : n;
  p.ldy = n;
  return p;
}

// A = [[1 2 3], [4 5 6]], B = [[7 8], [9 10], [11 12]]: A*B = [[58 64], [139 154]].
const std::vector<float> kA = {1, 2, 3, 4, 5, 6}, kAt = {1, 4, 2, 5, 3, 6};
const std::vector<float> kB = {7, 8, 9, 10, 11, 12}, kBt = {7, 9, 11, 8, 10, 12};

TEST(RefGemm, HandAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const GemmParams p = params(2, 2, 3, ta, tb);
      std::vector<float> y(4, -777.0f);
      f32_gemm(p, (ta ? kAt : kA).data(), (tb ? kBt : kB).data(), y.data(), 0, 2);
      EXPECT_EQ(y, (std::vector<float>{58, 64, 139, 154})) << ta << tb;
    }
  }
}

TEST(RefGemm, HandAlphaBeta) {
  GemmParams p = params(2, 2, 3, false, false);
  p.alpha = 2.0f;
  p.beta = 0.5f;
  std::vector<float> y = {2, 4, 6, 8};
  f32_gemm(p, kA.data(), kB.data(), y.data(), 0, 2);
  EXPECT_EQ(y, (std::vector<float>{117, 130, 281, 312}));
}

TEST(RefGemm, BetaZeroIgnoresPreviousContent) {
  const GemmParams p = params(2, 2, 3, false, true);
  std::vector<float> y(4, std::numeric_limits<float>::quiet_NaN());
  f32_gemm(p, kA.data(), kBt.data(), y.data(), 0, 2);
  EXPECT_EQ(y, (std::vector<float>{58, 64, 139, 154}));
}

TEST(RefGemm, RowRangeAndLeadingDims) {
  // A stored with lda 4 (one unused column), Y with ldy 3; only row 1 computed.
  GemmParams p = params(2, 2, 3, false, false);
  p.lda = 4;
  p.ldy = 3;
  const std::vector<float> a = {1, 2, 3, -99, 4, 5, 6, -99};
  std::vector<float> y(6, -777.0f);
  f32_gemm(p, a.data(), kB.data(), y.data(), 1, 2);
  EXPECT_EQ(y, (std::vector<float>{-777, -777, -777, 139, 154, -777}));
}

TEST(RefGemm, SweepAgainstNaive) {
  Lcg rng(41);
  for (int iter = 0; iter < 300; ++iter) {
    const bool ta = rng.uniform(0, 1), tb = rng.uniform(0, 1);
    GemmParams p = params(rng.uniform(1, 17), rng.uniform(1, 37), rng.uniform(1, 29), ta, tb);
    p.lda += rng.uniform(0, 2);
    p.ldb += rng.uniform(0, 2);
    p.ldy += rng.uniform(0, 2);
    p.alpha = rng.pick(std::vector<float>{1.0f, 0.5f, -2.0f});
    p.beta = rng.pick(std::vector<float>{0.0f, 1.0f, 0.25f});
    const auto a = random_floats((ta ? p.k : p.m) * p.lda, 100 + iter);
    const auto b = random_floats((tb ? p.n : p.k) * p.ldb, 200 + iter);
    const auto y0 = random_floats(p.m * p.ldy, 300 + iter);
    std::vector<double> expected, tol;
    std::vector<float> actual;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.ldy; ++j) {
        const double prev = y0[i * p.ldy + j];
        if (j >= p.n) {  // padding columns of Y stay untouched
          expected.push_back(prev);
          tol.push_back(0.0);
          continue;
        }
        double acc = 0, abs_sum = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const double av = ta ? a[kk * p.lda + i] : a[i * p.lda + kk];
          const double bv = tb ? b[j * p.ldb + kk] : b[kk * p.ldb + j];
          acc += av * bv;
          abs_sum += std::fabs(av * bv);
        }
        expected.push_back(p.alpha * acc + p.beta * prev);
        tol.push_back(
            test::sum_tolerance(std::fabs(p.alpha) * abs_sum + std::fabs(p.beta * prev), p.k + 2));
      }
    }
    std::vector<float> y = y0;
    const int64_t split = rng.uniform(0, static_cast<int>(p.m));
    f32_gemm(p, a.data(), b.data(), y.data(), 0, split);
    f32_gemm(p, a.data(), b.data(), y.data(), split, p.m);
    test::expect_close(y, expected, tol,
                       fmt::format("m{} n{} k{} ta{} tb{} alpha {} beta {}", p.m, p.n, p.k, ta, tb,
                                   p.alpha, p.beta));
  }
}

}  // namespace
}  // namespace tern::kernels::ref
