// The vector Exp, Sigmoid and Tanh (kernels/unary) against the reference (ref::unary) on
// every SIMD target this machine can dispatch to: lengths 0..40 and 1000 (tails of every
// size), inputs over the whole range where each function changes (|x| up to 100, past
// Exp's overflow between 88.72283172 and 88.72283936 and Highway's range end at 104), the
// infinities, NaN, and in place. Tolerances from the functions' errors: Highway's Exp within 1 ULP
// and Tanh within 4 ULP of the true value, std::exp and std::tanh within 1 ULP; Sigmoid adds a
// division and an addition (4 ULP in all).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference/elementwise.h"
#include "kernels/simd_test_util.h"
#include "kernels/unary/unary.h"

namespace tern {
namespace {

using kernels::ref::UnaryKind;
using kernels::ref::UnaryParams;

float ulps(UnaryKind kind) { return kind == UnaryKind::kExp ? 2.0f : 5.0f; }

std::vector<float> inputs(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> x(n);
  for (float& v : x) v = seed % 2 ? u(rng) : u(rng) / 16;  // half the runs near 0
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            88.72f,
                            88.72283172607422f,  // the largest float whose exp is finite
                            88.72283935546875f,  // the next: exp overflows
                            88.73f,
                            104.5f,
                            -104.5f,
                            -87.4f};
  for (int64_t i = 0; i < n; i += 7) x[i] = specials[(i / 7 + seed) % std::size(specials)];
  return x;
}

void check(UnaryKind kind, int64_t n, uint32_t seed, bool in_place) {
  SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << ", n " << n
                                  << (in_place ? ", in place" : ""));
  const UnaryParams p{kind};
  const std::vector<float> x = inputs(n, seed);
  std::vector<float> want(n);
  kernels::ref::unary<float>(p, n, x.data(), 1, want.data());
  std::vector<float> got = in_place ? x : std::vector<float>(n, 12345.0f);
  kernels::f32_unary(p, n, in_place ? got.data() : x.data(), got.data());
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "x[" << i << "] = " << x[i] << ": got " << got[i];
    } else if (std::isinf(want[i])) {
      ASSERT_EQ(got[i], want[i]) << "x[" << i << "] = " << x[i];
    } else {
      // Relative error, and an absolute floor for results near or below the smallest
      // normal (the reference's sigmoid(-91) is 1 / (1 + inf) = 0, the kernel's 2.8e-40).
      const float tol = ulps(kind) * test::kFloatUlp * std::abs(want[i]) + 1e-37f;
      ASSERT_NEAR(got[i], want[i], tol) << "x[" << i << "] = " << x[i];
    }
  }
}

TEST(SimdUnary, MatchesReferenceOverSweep) {
  test::for_each_simd_target([](const std::string&, int) {
    uint32_t seed = 1;
    for (UnaryKind kind : {UnaryKind::kExp, UnaryKind::kSigmoid, UnaryKind::kTanh}) {
      for (int64_t n = 0; n <= 40; ++n) {
        check(kind, n, seed, seed % 3 == 0);
        ++seed;
      }
      check(kind, 1000, seed++, false);
    }
  });
}

TEST(SimdUnary, OtherKindsAreRefused) {
  EXPECT_FALSE(kernels::f32_unary_supported(UnaryKind::kRelu));
  EXPECT_TRUE(kernels::f32_unary_supported(UnaryKind::kExp));
  float v = 1.0f;
  EXPECT_THROW(kernels::f32_unary(UnaryParams{UnaryKind::kLog}, 1, &v, &v), InvalidArgument);
}

}  // namespace
}  // namespace tern
