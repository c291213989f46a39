// Helpers shared by the reference-kernel and nn-op tests: deterministic random data,
// element-wise comparison with a per-element tolerance, and a tolerance from the
// arithmetic of a float32 sum.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tern::test {

/// Deterministic pseudo-random floats uniform in [lo, hi) (a 32-bit LCG, so every
/// platform and compiler sees the same values).
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

/// Deterministic pseudo-random integer in [lo, hi].
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : s_(seed * 2654435761u + 1u) {}
  int uniform(int lo, int hi) {
    s_ = s_ * 1664525u + 1013904223u;
    return lo + static_cast<int>((s_ >> 8) % static_cast<uint32_t>(hi - lo + 1));
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[uniform(0, static_cast<int>(v.size()) - 1)];
  }

 private:
  uint32_t s_;
};

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
