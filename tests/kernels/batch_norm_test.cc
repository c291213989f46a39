// Reference batch normalization (kernels/reference/batch_norm.h).
#include "kernels/reference/batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

TEST(RefBatchNorm, HandValues) {
  // C = 2, inner 2: ch0 (x - 1) / 2 * 1 + 0; ch1 (x - 3) / 0.5 * 2 + 1.
  BatchNormParams p;
  p.batch = 1;
  p.channels = 2;
  p.inner = 2;
  p.epsilon = 0.0f;
  const std::vector<float> x = {1, 2, 3, 4}, scale = {1, 2}, bias = {0, 1}, mean = {1, 3},
                           var = {4, 0.25f};
  std::vector<float> y(4);
  f32_batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{0, 0.5f, 1, 5}));
}

TEST(RefBatchNorm, EpsilonAndBatchAgainstFormula) {
  BatchNormParams p;
  p.batch = 3;
  p.channels = 5;
  p.inner = 7;
  p.epsilon = 1e-3f;
  const auto x = test::random_floats(3 * 5 * 7, 1, -3, 3);
  const auto scale = test::random_floats(5, 2), bias = test::random_floats(5, 3),
             mean = test::random_floats(5, 4), var = test::random_floats(5, 5, 0.0f, 2.0f);
  std::vector<float> y(x.size());
  f32_batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = (i / 7) % 5;
    expected[i] = static_cast<float>((x[i] - static_cast<double>(mean[c])) /
                                         std::sqrt(static_cast<double>(var[c]) + 1e-3) * scale[c] +
                                     bias[c]);
  }
  // y = x*a + b rounds a few times on values up to ~100: 1e-5 relative plus 1e-5.
  test::expect_near_all(y, expected, 1e-5f, 1e-5f);
}

}  // namespace
}  // namespace tern::kernels::ref
