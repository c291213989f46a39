// ScatterElements, Scatter and ScatterND: every axis (negative too), negative indices,
// duplicate indices under each reduction, every reduction and several dtypes, against a
// naive reference; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

double combine(const std::string& red, double a, double b) {
  if (red == "add") return a + b;
  if (red == "mul") return a * b;
  if (red == "max") return std::max(a, b);
  if (red == "min") return std::min(a, b);
  return b;
}

template <typename T>
void check_scatter_elements(int axis, const std::string& red, uint32_t seed) {
  const Shape ds = {3, 4, 5};
  const int a = axis < 0 ? axis + 3 : axis;
  Shape is = {2, 3, 4};
  is[a] = 3;
  const Tensor data = random_tensor<T>(ds, seed, -3, 3);
  const Tensor idx = random_tensor<int64_t>(is, seed + 1, -ds[a], ds[a] - 1);
  const Tensor upd = random_tensor<T>(is, seed + 2, -3, 3);
  const Tensor y =
      run1("ScatterElements", {data, idx, upd}, AttrMap().i("axis", axis).s("reduction", red), 18);
  std::vector<double> want(data.numel());
  for (int64_t i = 0; i < data.numel(); ++i) want[i] = data.to_float_vector()[i];
  for_each_index(is, [&](const Shape& o) {
    Shape dst = o;
    int64_t k = static_cast<int64_t>(idx.item_as_double(o));
    dst[a] = k < 0 ? k + ds[a] : k;
    const int64_t off = (dst[0] * ds[1] + dst[1]) * ds[2] + dst[2];
    want[off] = combine(red, want[off], upd.item_as_double(o));
  });
  const std::vector<float> got = y.to_float_vector();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
        << red << " axis " << axis << " " << i;
  }
}

TEST(ScatterElements, SweepAgainstNaive) {
  uint32_t seed = 1;
  for (int axis : {0, 1, 2, -1, -3}) {
    for (const char* red : {"none", "add", "mul", "max", "min"}) {
      check_scatter_elements<float>(axis, red, seed += 3);
      check_scatter_elements<int64_t>(axis, red, seed += 3);
    }
  }
  check_scatter_elements<int32_t>(1, "add", 99);
  check_scatter_elements<double>(2, "mul", 98);
}

TEST(ScatterElements, HandCheckedAndScatter9) {
  const Tensor data = f32({1, 2, 3, 4, 5}, {1, 5});
  const Tensor idx = i64({1, 3}, {1, 2});
  const Tensor upd = f32({1.1f, 2.1f}, {1, 2});
  EXPECT_EQ(run1("ScatterElements", {data, idx, upd}, AttrMap().i("axis", 1)).to_float_vector(),
            (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  EXPECT_EQ(run1("Scatter", {data, idx, upd}, AttrMap().i("axis", 1), 9).to_float_vector(),
            (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
  // Duplicates add up; any dtype without reduction.
  EXPECT_EQ(run1("ScatterElements", {data, i64({1, 1}, {1, 2}), upd},
                 AttrMap().i("axis", 1).s("reduction", "add"), 16)
                .to_float_vector(),
            (std::vector<float>{1, 5.2f, 3, 4, 5}));
  EXPECT_EQ(run1("ScatterElements",
                 {make<uint8_t>({1, 2, 3}, {3}), i32({-1}, {1}), make<uint8_t>({9}, {1})})
                .to_int64_vector(),
            (std::vector<int64_t>{1, 2, 9}));
}

TEST(ScatterND, HandCheckedAndReductions) {
  // The ONNX example shape: data [4, 4, 4], two index tuples of length 1.
  const Tensor data = iota_tensor({4, 2, 2});
  const Tensor idx = i64({0, 2, -4}, {3, 1});
  const Tensor upd = random_tensor<float>({3, 2, 2}, 5);
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    const Tensor y = run1("ScatterND", {data, idx, upd}, AttrMap().s("reduction", red), 18);
    std::vector<float> want = data.to_float_vector();
    const std::vector<float> u = upd.to_float_vector();
    for (int t = 0; t < 3; ++t) {
      const int64_t row = t == 0 ? 0 : t == 1 ? 2 : 0;
      for (int e = 0; e < 4; ++e) {
        want[row * 4 + e] = static_cast<float>(combine(red, want[row * 4 + e], u[t * 4 + e]));
      }
    }
    const std::vector<float> got = y.to_float_vector();
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << red << i;
  }
  // Full-rank tuples address single elements.
  EXPECT_EQ(
      run1("ScatterND", {i32({1, 2, 3, 4}, {2, 2}), i64({1, 0, 0, 1}, {2, 2}), i32({7, 8}, {2})})
          .to_int64_vector(),
      (std::vector<int64_t>{1, 8, 7, 4}));
}

TEST(Scatter, Errors) {
  const Tensor data = f32({1, 2, 3, 4}, {2, 2});
  expect_error<InvalidArgument>(
      [&] {
        run1("ScatterElements", {data, i64({2, 0}, {1, 2}), f32({1, 1}, {1, 2})});
      },
      {"ScatterElements 'test_node'", "index 2"});
  expect_error<ShapeError>(
      [&] {
        run1("ScatterElements", {data, i64({0, 0}, {1, 2}), f32({1}, {1, 1})});
      },
      {"ScatterElements 'test_node'", "one shape"});
  expect_error<ModelError>(
      [&] {
        run1("ScatterND", {data, i64({0}, {1, 1}), f32({1, 1}, {1, 2})},
             AttrMap().s("reduction", "sub"));
      },
      {"ScatterND 'test_node'", "reduction"});
  expect_error<ShapeError>(
      [&] {
        run1("ScatterND", {data, i64({0}, {1, 1}), f32({1}, {1})});
      },
      {"ScatterND 'test_node'", "updates must have shape [1, 2]"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("ScatterND", {make<uint8_t>({1, 2}, {2}), i64({0}, {1, 1}), make<uint8_t>({1}, {1})},
             AttrMap().s("reduction", "add"), 16);
      },
      {"ScatterND 'test_node'", "uint8"});
}

// S1: max/min reductions propagate NaN from either side, like np.maximum / np.minimum.
TEST(ScatterElements, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* red : {"max", "min"}) {
    const Tensor y =
        run1("ScatterElements", {f32({1, nan, 3}, {3}), i64({0, 1, 2}, {3}), f32({nan, 5, 2}, {3})},
             AttrMap().i("axis", 0).s("reduction", red), 18);
    const std::vector<float> v = y.to_float_vector();
    EXPECT_TRUE(std::isnan(v[0])) << red;
    EXPECT_TRUE(std::isnan(v[1])) << red;
    EXPECT_EQ(v[2], std::string(red) == "max" ? 3.0f : 2.0f) << red;
  }
}

}  // namespace
}  // namespace tern::test
