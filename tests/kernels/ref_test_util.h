// Helpers shared by the reference-kernel and op tests: the deterministic random
// generator, element-wise comparison with a per-element tolerance, and a tolerance from
// the arithmetic of a float32 sum.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tern::test {

/// The one deterministic pseudo-random generator of the kernel and op tests: a 32-bit LCG,
/// so every platform and compiler sees the same values (std::mt19937 with the standard
/// distributions does not promise that: the distributions are implementation-defined).
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : s_(seed * 2654435761u + 12345u) {}

  /// Uniform in [0, 2^24).
  uint32_t next24() {
    s_ = s_ * 1664525u + 1013904223u;
    return s_ >> 8;
  }
  /// Uniform float in [lo, hi).
  float uniform_float(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next24()) / static_cast<float>(1u << 24);
  }
  /// Uniform double in [lo, hi) (24 random bits).
  double uniform_real(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next24()) / static_cast<double>(1u << 24);
  }
  /// Uniform integer in [lo, hi] (hi - lo < 2^24).
  int uniform(int lo, int hi) {
    return lo + static_cast<int>(next24() % static_cast<uint32_t>(hi - lo + 1));
  }
  /// Uniform int64 in [lo, hi] (hi - lo < 2^24).
  int64_t uniform_int64(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next24() % static_cast<uint64_t>(hi - lo + 1));
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[uniform(0, static_cast<int>(v.size()) - 1)];
  }

 private:
  uint32_t s_;
};

/// n deterministic pseudo-random floats uniform in [lo, hi) (Lcg(seed)).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  Lcg rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform_float(lo, hi);
  return v;
}

/// Bound on the float32 rounding error of a sum of `terms` products whose absolute
/// values add up to `abs_sum`: each of the `terms` additions and each product rounds
/// with a relative error of at most 2^-24 of a partial sum <= abs_sum; the factor 2
/// leaves room for the order a kernel chooses.
inline double sum_tolerance(double abs_sum, int64_t terms) {
  return 2.0 * static_cast<double>(terms + 1) * std::ldexp(abs_sum, -24) + 1e-30;
}

/// Expects |actual[i] - expected[i]| <= tol[i] for all i, reporting the first few
/// mismatches with their index.
inline void expect_close(const std::vector<float>& actual, const std::vector<double>& expected,
                         const std::vector<double>& tol, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;  // also equal infinities
    if (!(std::fabs(actual[i] - expected[i]) <= tol[i])) {
      ADD_FAILURE() << what << ": element " << i << " is " << actual[i] << ", expected "
                    << expected[i] << " +- " << tol[i];
      if (++reported == 5) return;
    }
  }
}

/// Expects |actual[i] - expected[i]| <= atol + rtol * |expected[i]| for all i.
inline void expect_near_all(const std::vector<float>& actual, const std::vector<float>& expected,
                            float atol, float rtol = 0.0f, const std::string& what = "") {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const float tol = atol + rtol * std::fabs(expected[i]);
    if (!(std::fabs(actual[i] - expected[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << actual[i] << ", expected "
                    << expected[i] << " +- " << tol;
      if (++reported == 5) return;
    }
  }
}

}  // namespace tern::test
