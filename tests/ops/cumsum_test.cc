// CumSum: every dtype, every axis (negative too), exclusive / reverse combinations against
// a naive reference; hand-checked values; errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

template <typename T>
void check_cumsum(const Shape& shape, int64_t axis, bool exclusive, bool reverse, uint32_t seed) {
  const Tensor x = random_tensor<T>(shape, seed, -5, 5);
  const Tensor y = run1("CumSum", {x, i64({axis}, {})},
                        AttrMap().i("exclusive", exclusive).i("reverse", reverse), 14);
  ASSERT_EQ(y.shape(), x.shape());
  ASSERT_EQ(y.dtype(), x.dtype());
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  for_each_index(shape, [&](const Shape& o) {
    std::vector<int64_t> idx(o.begin(), o.end());
    double want = 0;
    for (int64_t k = 0; k < shape[a]; ++k) {
      const bool in =
          reverse ? (exclusive ? k > o[a] : k >= o[a]) : (exclusive ? k < o[a] : k <= o[a]);
      if (!in) continue;
      idx[a] = k;
      want += x.item_as_double(idx);
    }
    ASSERT_NEAR(y.item_as_double(o), want, std::is_floating_point_v<T> ? 1e-4 : 0)
        << shape_str(o) << " axis " << axis;
  });
}

TEST(CumSum, SweepAgainstNaive) {
  uint32_t seed = 1;
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    for (int ex = 0; ex < 2; ++ex) {
      for (int rev = 0; rev < 2; ++rev) {
        check_cumsum<float>({3, 5, 7}, axis, ex, rev, seed++);
        check_cumsum<double>({2, 1, 4}, axis, ex, rev, seed++);
        check_cumsum<int32_t>({3, 2, 5}, axis, ex, rev, seed++);
        check_cumsum<int64_t>({1, 6, 3}, axis, ex, rev, seed++);
      }
    }
  }
}

TEST(CumSum, HandChecked) {
  const Tensor x = f32({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(run1("CumSum", {x, i32({0}, {})}).to_float_vector(),
            (std::vector<float>{1, 3, 6, 10, 15}));
  EXPECT_EQ(run1("CumSum", {x, i32({0}, {})}, AttrMap().i("exclusive", 1).i("reverse", 1))
                .to_float_vector(),
            (std::vector<float>{14, 12, 9, 5, 0}));
}

TEST(CumSum, Errors) {
  const Tensor x = f32({1, 2}, {2});
  expect_error<ShapeError>(
      [&] {
        run1("CumSum", {x, i64({1}, {})});
      },
      {"CumSum 'test_node'", "axis 1"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("CumSum", {x, f32({0}, {})});
      },
      {"CumSum 'test_node'", "axis"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("CumSum", {make<uint8_t>({1}, {1}), i64({0}, {})});
      },
      {"CumSum 'test_node'", "uint8"});
}

}  // namespace
}  // namespace tern::test
