// Reference softmax / log-softmax (kernels/reference/softmax.h): hand-checked values,
// numerical stability and a sweep over [outer, axis, inner] against double precision.
#include "kernels/reference/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"

namespace tern::kernels::ref {
namespace {

using test::Lcg;
using test::random_floats;

std::vector<float> softmax(const std::vector<float>& x, int64_t outer, int64_t axis, int64_t inner,
                           bool log) {
  std::vector<float> y(x.size(), -777.0f);
  f32_softmax(x.data(), y.data(), 0, outer, axis, inner, log);
  return y;
}

TEST(RefSoftmax, HandValues) {
  // softmax([1 2 3]) = e^(x-3) / (e^-2 + e^-1 + 1); log-softmax = x - 3 - log(1.5032...).
  test::expect_near_all(softmax({1, 2, 3}, 1, 3, 1, false), {0.09003057f, 0.24472847f, 0.66524096f},
                        1e-7f);
  test::expect_near_all(softmax({1, 2, 3}, 1, 3, 1, true),
                        {-2.40760596f, -1.40760596f, -0.40760596f}, 1e-6f);
}

TEST(RefSoftmax, LargeInputsDoNotOverflow) {
  // exp(1000) overflows float; subtracting the max keeps the same answer as [1 2 3].
  test::expect_near_all(softmax({1000, 1001, 1002}, 1, 3, 1, false),
                        {0.09003057f, 0.24472847f, 0.66524096f}, 1e-7f);
  test::expect_near_all(softmax({-1000, -1001, -1002, 5000}, 1, 4, 1, true),
                        {-6000, -6001, -6002, 0}, 1e-3f);
}

TEST(RefSoftmax, StridedAxisAndInPlace) {
  // [1, 2, 2] along the middle dim: columns (1, 3) and (2, 4) normalized separately.
  std::vector<float> x = {1, 2, 3, 4};
  const float a = 1.0f / (1.0f + std::exp(2.0f)), b = 1.0f - a;
  f32_softmax(x.data(), x.data(), 0, 1, 2, 2, false);
  test::expect_near_all(x, {a, a, b, b}, 1e-7f);
}

TEST(RefSoftmax, SweepAgainstDouble) {
  Lcg rng(53);
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t outer = rng.uniform(1, 4), axis = rng.uniform(1, 19), inner = rng.uniform(1, 5);
    const bool log = rng.uniform(0, 1);
    const auto x = random_floats(outer * axis * inner, 60 + iter, -20.0f, 20.0f);
    std::vector<double> expected(x.size()), tol(x.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) { return (o * axis + j) * inner + i; };
        double m = -1e300, sum = 0;
        for (int64_t j = 0; j < axis; ++j) m = std::max(m, static_cast<double>(x[at(j)]));
        for (int64_t j = 0; j < axis; ++j) sum += std::exp(x[at(j)] - m);
        for (int64_t j = 0; j < axis; ++j) {
          const double e = std::exp(x[at(j)] - m);
          expected[at(j)] = log ? x[at(j)] - m - std::log(sum) : e / sum;
          // x - m rounds by up to ulp(x - m) / 2, which exp turns into a relative error
          // of |x - m| * 2^-24; exp, log and the division add a few ulp, the sum `axis`
          // roundings.
          const double rel = (std::fabs(x[at(j)] - m) + 8.0 + axis) * std::ldexp(1.0, -23);
          tol[at(j)] = log ? rel * (std::fabs(x[at(j)] - m) + 1.0) : rel * e / sum;
        }
      }
    }
    test::expect_close(softmax(x, outer, axis, inner, log), expected, tol, "softmax sweep");
  }
}

}  // namespace
}  // namespace tern::kernels::ref
