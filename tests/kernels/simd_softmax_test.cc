// The vectorised softmax (kernels/softmax) against the reference (ref::f32_softmax) on
// every SIMD target this machine can dispatch to: axis lengths 1..40 (rows shorter and
// longer than a vector, with tails), inner 1, 2, 3, 7, 16, 17 and 33 (masked column
// vectors), several outer slabs split over two calls, softmax and log-softmax, inputs
// up to +-80 (the max subtraction must keep exp in range), NaN and infinite entries, and
// in place. Tolerances from the arithmetic: both exps are within 1 ULP of the true value
// (Highway's Exp, and std::exp), the sums differ only in their order (at most axis_len
// roundings), and log-softmax's shift adds the log's error (4 ULP for Highway's Log).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/softmax.h"
#include "kernels/simd_test_util.h"
#include "kernels/softmax/softmax.h"

namespace tern {
namespace {

void check(int64_t outer, int64_t n, int64_t inner, bool log, uint32_t seed, bool in_place) {
  SCOPED_TRACE(testing::Message() << "outer " << outer << ", axis " << n << ", inner " << inner
                                  << (log ? ", log" : "") << (in_place ? ", in place" : ""));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-80.0f, 80.0f);
  std::vector<float> x(outer * n * inner);
  for (float& v : x) v = u(rng);
  // A NaN and an infinity now and then: their whole softmax is NaN in both.
  if (seed % 5 == 0) x[seed % x.size()] = std::numeric_limits<float>::quiet_NaN();
  if (seed % 7 == 0) x[(seed * 3) % x.size()] = std::numeric_limits<float>::infinity();
  if (seed % 11 == 0) x[(seed * 5) % x.size()] = -std::numeric_limits<float>::infinity();
  std::vector<float> want(x.size());
  kernels::ref::f32_softmax(x.data(), want.data(), 0, outer, n, inner, log);
  std::vector<float> got = in_place ? x : std::vector<float>(x.size(), 12345.0f);
  const float* src = in_place ? got.data() : x.data();
  const int64_t mid = outer / 2;
  kernels::f32_softmax(src, got.data(), 0, mid, n, inner, log);
  kernels::f32_softmax(src, got.data(), mid, outer, n, inner, log);
  // Log-softmax: the reference rounds x - (max + log(sum)) at the scale of the max (the
  // kernel subtracts the max first), so its error is relative to the largest |x|.
  float scale = 1.0f;
  for (float v : x) {
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  }
  const float rel = static_cast<float>(n + 8) * test::kFloatUlp;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "output " << i << ": want NaN, got " << got[i];
      continue;
    }
    if (std::isinf(want[i])) {  // log-softmax of a -inf entry
      ASSERT_EQ(got[i], want[i]) << "output " << i;
      continue;
    }
    const float tol = log ? rel * scale : rel * std::abs(want[i]) + 1e-37f;
    ASSERT_NEAR(got[i], want[i], tol) << "output " << i;
  }
}

TEST(SimdSoftmax, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string&, int) {
    uint32_t seed = 1;
    for (int64_t n = 1; n <= 40; ++n) {
      for (int64_t inner : {1, 2, 3, 7, 16, 17, 33}) {
        for (bool log : {false, true}) {
          if (inner > 3 && n % 3 != 0) continue;  // wide slabs: every third length
          check(1 + seed % 4, n, inner, log, seed, seed % 6 == 0);
          ++seed;
        }
      }
    }
  });
}

TEST(SimdSoftmax, ManyShortRowsCrossChunks) {
  // A detection head's [1, 4420, 2] softmax: rows of 2 in chunks of 512 rows.
  test::for_each_simd_target([](const std::string&, int) {
    for (bool log : {false, true}) check(4420, 2, 1, log, 40 + log, false);
    check(3001, 5, 1, false, 42, true);
  });
}

TEST(SimdSoftmax, EmptyInnerTouchesNothing) {
  // [2, 5, 0]: no softmax to take (an axis of 5 over nothing), so no element is read or
  // written, whatever the axis length says.
  test::for_each_simd_target([](const std::string&, int) {
    std::vector<float> guard(64, 7.0f);
    kernels::f32_softmax(guard.data(), guard.data(), 0, 2, 5, 0, false);
    for (float v : guard) ASSERT_EQ(v, 7.0f);
  });
}

TEST(SimdSoftmax, HandValues) {
  test::for_each_simd_target([](const std::string&, int) {
    const std::vector<float> x = {1, 2, 3, 1000, 1001, 1002};
    std::vector<float> y(6);
    kernels::f32_softmax(x.data(), y.data(), 0, 2, 3, 1, false);
    for (int r = 0; r < 2; ++r) {
      EXPECT_NEAR(y[r * 3 + 0], 0.09003057f, 1e-7f);
      EXPECT_NEAR(y[r * 3 + 1], 0.24472847f, 1e-7f);
      EXPECT_NEAR(y[r * 3 + 2], 0.66524096f, 1e-7f);
    }
  });
}

}  // namespace
}  // namespace tern
