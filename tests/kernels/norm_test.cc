// Reference normalization and separable-resize kernels (kernels/reference/norm.h,
// resize.h): hand-checked values and invariants.
#include "kernels/reference/norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"
#include "kernels/reference/resize.h"

namespace tern::kernels::ref {
namespace {

TEST(RefNorm, NormalizeRowsHandChecked) {
  // Row [1, 2, 3, 4]: mean 2.5, var 1.25; row [5, 5, 5, 5]: var 0 -> 0 output.
  const std::vector<float> x = {1, 2, 3, 4, 5, 5, 5, 5};
  std::vector<float> y(8), mean(2), inv(2);
  f32_normalize_rows(x.data(), y.data(), 2, 4, 0.0f, mean.data(), inv.data());
  EXPECT_FLOAT_EQ(mean[0], 2.5f);
  EXPECT_FLOAT_EQ(inv[0], static_cast<float>(1 / std::sqrt(1.25)));
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(-1.5 / std::sqrt(1.25)));
  EXPECT_FLOAT_EQ(y[3], static_cast<float>(1.5 / std::sqrt(1.25)));
  f32_normalize_rows(x.data(), y.data(), 2, 4, 1.0f, nullptr, nullptr);
  EXPECT_FLOAT_EQ(y[4], 0.0f);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(-1.5 / std::sqrt(2.25)));
}

TEST(RefNorm, LrnSizeOneIsAPointwiseScale) {
  // size 1: y = x / (bias + alpha * x^2)^beta.
  const std::vector<float> x = {1, -2, 3};
  std::vector<float> y(3);
  f32_lrn(x.data(), y.data(), 1, 3, 1, 1, 0.5f, 1.0f, 2.0f);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(y[i], x[i] / (2.0f + 0.5f * x[i] * x[i]));
}

TEST(RefResize, CubicWeightsSumToOneAndInterpolate) {
  for (double a : {-0.75, -0.5}) {
    for (double t : {0.0, 0.1, 0.5, 0.77}) {
      double w[4];
      resize_cubic_weights(t, a, w);
      EXPECT_NEAR(w[0] + w[1] + w[2] + w[3], 1.0, 1e-12);
      // a = -0.5 (Keys' choice) reproduces a linear function: sum w_k * (k - 1) = t.
      if (a == -0.5) {
        EXPECT_NEAR(-w[0] + w[2] + 2 * w[3], t, 1e-12);
      }
      // Mirror symmetry: the weights of 1 - t are those of t reversed.
      double m[4];
      resize_cubic_weights(1.0 - t, a, m);
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(m[k], w[3 - k], 1e-12);
    }
    double w[4];
    resize_cubic_weights(0.0, a, w);
    EXPECT_EQ(w[1], 1.0);
    EXPECT_EQ(w[0], 0.0);
  }
}

TEST(RefResize, ResizeAxisAgainstNaiveLoop) {
  // x [2, 3, 5] along the middle dim to 4 outputs with mixed taps.
  const std::vector<float> x = test::random_floats(30, 3);
  std::vector<ResizeTaps> taps(4);
  taps[0] = {1, {2, 0, 0, 0}, {1.0f, 0, 0, 0}};
  taps[1] = {2, {0, 1, 0, 0}, {0.25f, 0.75f, 0, 0}};
  taps[2] = {4, {0, 1, 2, 2}, {-0.1f, 0.6f, 0.6f, -0.1f}};
  taps[3] = {1, {1, 0, 0, 0}, {0.5f, 0, 0, 0}};
  std::vector<float> y(2 * 4 * 5);
  f32_resize_axis(x.data(), y.data(), 2, 3, 4, 5, taps.data());
  for (int o = 0; o < 2; ++o)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) {
        float want = 0;
        double magnitude = 0;  // sum of |w * x|: what the rounding errors scale with
        for (int k = 0; k < taps[j].n; ++k) {
          const float term = taps[j].weight[k] * x[(o * 3 + taps[j].index[k]) * 5 + i];
          want += term;
          magnitude += std::fabs(double(term));
        }
        // n products and n sums, each rounded once (or fused, as the compiler contracts
        // them, which differs between this file's and the kernel's optimisation levels
        // on arm64): both sides are within (2n)u * magnitude of the exact sum. The 4-tap
        // row cancels (-0.1, 0.6, 0.6, -0.1), so ULPs of the result are no bound.
        const double tol = 2.0 * 2 * taps[j].n * std::ldexp(1.0, -24) * magnitude;
        EXPECT_NEAR(y[(o * 4 + j) * 5 + i], want, tol) << "output " << o << "," << j << "," << i;
      }
}

}  // namespace
}  // namespace tern::kernels::ref
