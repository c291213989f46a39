// The SIMD matrix multiply (kernels/gemm) against the reference (ref::f32_gemm, then the
// bias and epilogue of ref::f32_epilogue) on every SIMD target this machine can dispatch
// to: M across the register tile's rows and the chunks of 8 tiles (1 to 53), N across a
// vector, a tile width and a panel (1 to 300, with tails past the last whole vector), K
// from 0 to 37, A stored either way, leading dimensions wider than the matrices, alpha
// and beta, a per-row bias with every activation and the residual before or after it,
// and the items split over two calls. Tolerance from the arithmetic: the kernel and the
// reference sum the same K products in the same order but round the bias, alpha and
// beta terms in another order, so they differ by a few roundings of the largest partial
// sum: (K + 4) ulp of sum |terms|, plus 4 ulp of the result for Sigmoid and SiLU, whose
// vector exp differs from std::exp by up to 1 ulp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/gemm/gemm.h"
#include "kernels/reference/epilogue.h"
#include "kernels/reference/gemm.h"
#include "kernels/simd_test_util.h"

namespace tern {
namespace {

using kernels::ref::Activation;
using kernels::ref::Epilogue;
using kernels::ref::GemmParams;

struct Case {
  int64_t m, n, k;
  bool trans_a = false;
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  Activation act = Activation::kNone;
  int residual = 0;  // 0 none, 1 before the activation, 2 after
  int64_t pad = 0;   // extra columns in every leading dimension
};

void check(const Case& c, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "M " << c.m << " N " << c.n << " K " << c.k << " transA "
                                  << c.trans_a << " alpha " << c.alpha << " beta " << c.beta
                                  << " bias " << c.bias << " activation " << static_cast<int>(c.act)
                                  << " residual " << c.residual << " pad " << c.pad);
  GemmParams p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.trans_a = c.trans_a;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.lda = (c.trans_a ? c.m : c.k) + c.pad;
  p.ldb = c.n + c.pad;
  p.ldy = c.n + c.pad;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](int64_t size) {
    std::vector<float> v(static_cast<size_t>(size));
    for (float& x : v) x = u(rng);
    return v;
  };
  const std::vector<float> a = fill((c.trans_a ? c.k : c.m) * p.lda);
  const std::vector<float> b = fill(c.k * p.ldb);
  const std::vector<float> bias = fill(c.m);
  const std::vector<float> z = fill(c.m * p.ldy);
  const std::vector<float> y0 = fill(c.m * p.ldy);
  Epilogue e;
  e.activation = c.act;
  e.alpha = 0.1f;  // LeakyRelu's slope, Clip's min, HardSigmoid's alpha
  e.beta = c.act == Activation::kClip ? 0.5f : 0.4f;
  e.residual = c.residual != 0;
  e.residual_before_activation = c.residual == 1;

  std::vector<float> want = y0;
  kernels::ref::f32_gemm(p, a.data(), b.data(), want.data(), 0, c.m);
  for (int64_t i = 0; i < c.m; ++i) {
    float* row = want.data() + i * p.ldy;
    kernels::ref::f32_epilogue(e, c.n, row, 1, c.bias ? bias.data() + i : nullptr, 0,
                               z.data() + i * p.ldy, 1, row, 1);
  }
  // |terms| of each element, for the tolerance.
  std::vector<float> mag(want.size(), 0.0f);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      float s = std::abs(c.beta * y0[i * p.ldy + j]) + (c.bias ? std::abs(bias[i]) : 0.0f) +
                (e.residual ? std::abs(z[i * p.ldy + j]) : 0.0f);
      for (int64_t k = 0; k < c.k; ++k) {
        const float av = c.trans_a ? a[k * p.lda + i] : a[i * p.lda + k];
        s += std::abs(c.alpha * av * b[k * p.ldb + j]);
      }
      mag[i * p.ldy + j] = s;
    }
  }

  tern::test::for_each_simd_target([&](const std::string&, int64_t) {
    ASSERT_TRUE(kernels::gemm_supported(p));
    std::vector<float> got = y0;
    kernels::GemmOutput out;
    out.e = &e;
    out.row_bias = c.bias ? bias.data() : nullptr;
    out.z = z.data();
    const int64_t items = kernels::gemm_work(p).items();
    kernels::f32_gemm(p, a.data(), b.data(), got.data(), out, 0, items / 2);
    kernels::f32_gemm(p, a.data(), b.data(), got.data(), out, items / 2, items);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < p.ldy; ++j) {
        const int64_t at = i * p.ldy + j;
        if (j >= c.n) {  // the padding of a row is never written
          ASSERT_EQ(got[at], y0[at]) << "row " << i << " column " << j;
          continue;
        }
        const float tol = static_cast<float>(c.k + 4) * test::kFloatUlp * mag[at] +
                          4.0f * test::kFloatUlp * std::abs(want[at]) + 1e-30f;
        ASSERT_NEAR(got[at], want[at], tol) << "row " << i << " column " << j;
      }
    }
  });
}

TEST(SimdGemm, MatchesReferenceOverShapes) {
  uint32_t seed = 1;
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 13, 49, 53}) {
    for (int64_t n : {1, 3, 15, 16, 17, 33, 48, 64, 65, 100, 257, 300}) {
      for (int64_t k : {0, 1, 5, 24, 37}) {
        Case c{m, n, k};
        c.trans_a = (m + n + k) % 2 == 1;
        c.pad = n % 3;
        check(c, seed++);
      }
    }
  }
}

TEST(SimdGemm, AlphaBetaBiasAndEpilogues) {
  uint32_t seed = 100;
  for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kClip,
                         Activation::kLeakyRelu, Activation::kHardSigmoid, Activation::kHardSwish,
                         Activation::kSigmoid, Activation::kSilu}) {
    for (int residual : {0, 1, 2}) {
      Case c{7, 70, 11};
      c.bias = true;
      c.act = act;
      c.residual = residual;
      check(c, seed++);
    }
  }
  for (float alpha : {1.0f, 0.5f, -2.0f}) {
    for (float beta : {0.0f, 1.0f, 0.25f}) {
      Case c{5, 37, 9};
      c.alpha = alpha;
      c.beta = beta;
      c.trans_a = beta == 1.0f;
      c.act = Activation::kRelu;
      check(c, seed++);
    }
  }
}

TEST(SimdGemm, WorkGridCoversRowsAndColumns) {
  GemmParams p;
  p.m = 1;
  p.n = 1000;
  p.k = 512;
  tern::test::for_each_simd_target([&](const std::string&, int64_t lanes) {
    const kernels::WorkGrid g = kernels::gemm_work(p);
    // A fully connected layer on one image: one row chunk, several panels of columns.
    EXPECT_EQ(g.outer, 1);
    EXPECT_GT(g.inner, 1) << "lanes " << lanes;
  });
  p.m = 0;
  EXPECT_EQ(kernels::gemm_work(p).items(), 0);
  p.trans_b = true;
  EXPECT_FALSE(kernels::gemm_supported(p));
}

}  // namespace
}  // namespace tern
