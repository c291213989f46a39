// OneHot: every axis (incl. negative), negative and out-of-range indices, float and int
// indices/depth, several value dtypes, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(OneHot, SweepAgainstNaive) {
  const Tensor idx = i64({0, 3, -1, 5, -4, 2}, {2, 3});
  const int64_t depth = 4;
  for (int axis = -3; axis <= 2; ++axis) {
    const Tensor y =
        run1("OneHot", {idx, i64({depth}, {}), f32({-1, 7}, {2})}, AttrMap().i("axis", axis), 11);
    const int a = axis < 0 ? axis + 3 : axis;
    Shape want = {2, 3};
    want.insert(want.begin() + a, depth);
    ASSERT_EQ(y.shape(), want);
    for_each_index(want, [&](const Shape& o) {
      std::vector<int64_t> io(o.begin(), o.end());
      const int64_t j = io[a];
      io.erase(io.begin() + a);
      int64_t k = static_cast<int64_t>(idx.item_as_double(io));
      if (k < 0) k += depth;
      ASSERT_EQ(y.item_as_double(o), k == j ? 7.0 : -1.0) << "axis " << axis;
    });
  }
}

TEST(OneHot, DtypesHandChecked) {
  // Float indices and depth, int64 values.
  const Tensor y =
      run1("OneHot", {f32({1.0f, 0.0f}, {2}), f32({3.0f}, {1}), i64({0, 1}, {2})}, {}, 11);
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{0, 1, 0, 1, 0, 0}));
  const Tensor z = run1("OneHot", {i32({2}, {1}), i32({2}, {}), make<double>({0, 1}, {2})}, {}, 11);
  EXPECT_EQ(z.to_float_vector(), (std::vector<float>{0, 0}));  // 2 is out of range
}

TEST(OneHot, Errors) {
  expect_error<ShapeError>(
      [] {
        run1("OneHot", {i64v({0}), i64({2}, {}), f32({0, 1, 2}, {3})}, {}, 11);
      },
      {"OneHot 'test_node'", "values"});
  expect_error<ShapeError>(
      [] {
        run1("OneHot", {i64v({0}), i64({2}, {}), f32({0, 1}, {2})}, AttrMap().i("axis", 2), 11);
      },
      {"OneHot 'test_node'", "axis 2"});
  expect_error<ShapeError>(
      [] {
        run1("OneHot", {i64({0, 1, 2, 3}, {4}), i64({int64_t{1} << 62}, {}), f32({0, 1}, {2})}, {},
             11);
      },
      {"OneHot 'test_node'", "more elements than int64 can count"});
  expect_error<InvalidArgument>(
      [] {
        run1("OneHot", {i64v({0}), i64({-1}, {}), f32({0, 1}, {2})}, {}, 11);
      },
      {"OneHot 'test_node'", "depth"});
  expect_error<UnsupportedOpError>(
      [] {
        run1("OneHot", {make<uint8_t>({0}, {1}), i64({2}, {}), f32({0, 1}, {2})}, {}, 11);
      },
      {"OneHot 'test_node'", "uint8"});
}

// D7: a float depth that is NaN, infinite or beyond int64 is an InvalidArgument naming the
// node; float indices saturate, so 1e30 / -1e30 / inf are out of range (an all-off row).
TEST(OneHot, NonFiniteFloats) {
  for (float depth :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(), 1e30f}) {
    expect_error<InvalidArgument>(
        [&] {
          run1("OneHot", {i64v({0}), f32({depth}, {}), f32({0, 1}, {2})}, {}, 11);
        },
        {"OneHot 'test_node'", "depth must be finite"});
  }
  const Tensor y = run1("OneHot",
                        {f32({1e30f, -1e30f, std::numeric_limits<float>::infinity(), 2.0f}, {4}),
                         make<double>({3.0}, {}), f32({0, 1}, {2})},
                        {}, 11);
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace tern::test
