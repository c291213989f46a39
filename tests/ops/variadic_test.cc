// Max, Min, Sum, Mean over 1..N inputs with multidirectional broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Variadic, HandChecked) {
  const Tensor a = f32({1.f, 5.f, 3.f}, {3});
  const Tensor b = f32({4.f, 2.f, 6.f}, {3});
  const Tensor c = f32({0.f, 9.f, 1.f}, {3});
  EXPECT_EQ(run1("Max", {a, b, c}).to_float_vector(), (std::vector<float>{4.f, 9.f, 6.f}));
  EXPECT_EQ(run1("Min", {a, b, c}).to_float_vector(), (std::vector<float>{0.f, 2.f, 1.f}));
  EXPECT_EQ(run1("Sum", {a, b, c}).to_float_vector(), (std::vector<float>{5.f, 16.f, 10.f}));
  // One input: a copy.
  const Tensor one = run1("Sum", {a});
  EXPECT_EQ(one.to_float_vector(), a.to_float_vector());
  EXPECT_NE(one.raw_data(), a.raw_data());
}

TEST(Variadic, BroadcastSweepAgainstNaive) {
  // Shapes that only broadcast all together: [2,1,5], [3,1], [1], scalar.
  const Tensor a = random_tensor<float>({2, 1, 5}, 1);
  const Tensor b = random_tensor<float>({3, 1}, 2);
  const Tensor c = random_tensor<float>({1}, 3);
  const Tensor d = Tensor::scalar_f32(0.25f);
  for (const char* op : {"Max", "Min", "Sum"}) {
    const Tensor y = run1(op, {a, b, c, d}, {}, 13, 2);
    ASSERT_EQ(y.shape(), (Shape{2, 3, 5}));
    for_each_index(y.shape(), [&](const Shape& idx) {
      const double va = broadcast_read(a, idx), vb = broadcast_read(b, idx),
                   vc = broadcast_read(c, idx), vd = broadcast_read(d, idx);
      double want;
      if (std::string(op) == "Max") {
        want = std::max({va, vb, vc, vd});
      } else if (std::string(op) == "Min") {
        want = std::min({va, vb, vc, vd});
      } else {
        // Summed left to right in float, like the op.
        want = static_cast<float>(static_cast<float>(static_cast<float>(va + vb) + vc) + vd);
      }
      ASSERT_EQ(y.item_as_double(idx), want) << op << " at " << shape_str(idx);
    });
  }
}

TEST(Variadic, NaNPropagatesInMaxMin) {
  const Tensor a = f32({NAN, 1.f, 2.f}, {3});
  const Tensor b = f32({1.f, NAN, 0.f}, {3});
  for (const char* op : {"Max", "Min"}) {
    const std::vector<float> y = run1(op, {a, b}).to_float_vector();
    EXPECT_TRUE(std::isnan(y[0])) << op;
    EXPECT_TRUE(std::isnan(y[1])) << op;
  }
}

TEST(Variadic, IntegerMaxMinFromOpset12) {
  const Tensor a = i64({1, -5, 7}, {3});
  const Tensor b = i64({3}, {1});
  EXPECT_EQ(run1("Max", {a, b}, {}, 12).to_int64_vector(), (std::vector<int64_t>{3, 3, 7}));
  EXPECT_EQ(run1("Min", {a, b}, {}, 13).to_int64_vector(), (std::vector<int64_t>{1, -5, 3}));
  EXPECT_EQ(run1("Max", {i32({1, 9}, {2}), i32({4, 4}, {2})}, {}, 13).to_int64_vector(),
            (std::vector<int64_t>{4, 9}));
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Max", {a, b}, {}, 11);
      },
      {"Max 'test_node'", "float32", "int64"});
  expect_error<UnsupportedOpError>([&] { run1("Sum", {a, b}, {}, 13); }, {"Sum 'test_node'"});
  expect_error<UnsupportedOpError>([&] { run1("Mean", {a, b}, {}, 13); }, {"Mean 'test_node'"});
}

TEST(Variadic, Errors) {
  expect_error<ShapeError>(
      [] {
        run1("Sum", {f32({1, 2}, {2}), f32({1, 2, 3}, {3}), f32({1}, {1})});
      },
      {"Sum 'test_node'", "[2]", "[3]", "not broadcastable"});
  expect_error<InvalidArgument>(
      [] {
        run1("Max", {f32({1}, {1}), i64({1}, {1})});
      },
      {"Max 'test_node'", "input 1", "float32", "int64"});
}

// Max and Min over every numeric dtype: the extremes of each type survive, broadcasting
// a [3] against a [2, 1] (and a strided view of the latter).
template <typename T>
void check_max_min() {
  using L = std::numeric_limits<T>;
  const Tensor a = make<T>({L::lowest(), static_cast<T>(5), L::max()}, {3});
  const Tensor base =
      make<T>({static_cast<T>(1), static_cast<T>(9), static_cast<T>(2), static_cast<T>(7)}, {2, 2});
  const Tensor b = base.slice(1, 0, 1);  // [2, 1], strided: {1, 2}
  const Tensor mx = run1("Max", {a, b});
  const Tensor mn = run1("Min", {a, b});
  ASSERT_EQ(mx.dtype(), dtype_of<T>());
  ASSERT_EQ(mx.shape(), (Shape{2, 3}));
  const double lo = static_cast<double>(L::lowest()), hi = static_cast<double>(L::max());
  const std::vector<double> want_max = {1, 5, hi, 2, 5, hi};
  const std::vector<double> want_min = {lo, 1, 1, lo, 2, 2};
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(mx.item_as_double({i / 3, i % 3}), want_max[i]) << dtype_name(dtype_of<T>()) << i;
    EXPECT_EQ(mn.item_as_double({i / 3, i % 3}), want_min[i]) << dtype_name(dtype_of<T>()) << i;
  }
}

TEST(Variadic, MaxMinEveryNumericDtype) {
  check_max_min<float>();
  check_max_min<double>();
  check_max_min<int8_t>();
  check_max_min<int16_t>();
  check_max_min<int32_t>();
  check_max_min<int64_t>();
  check_max_min<uint8_t>();
  check_max_min<uint16_t>();
  check_max_min<uint32_t>();
  check_max_min<uint64_t>();
  // float16 through Cast: 65504 is its largest finite value.
  const Tensor h = run1("Cast", {f32({-65504.f, 3.f, 0.5f}, {3})}, AttrMap().i("to", 10));
  const Tensor g = run1("Cast", {f32({1.f, 2.f, 0.25f}, {3})}, AttrMap().i("to", 10));
  const Tensor y = run1("Max", {h, g});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.item_as_double({0}), 1.0);
  EXPECT_EQ(y.item_as_double({1}), 3.0);
  EXPECT_EQ(y.item_as_double({2}), 0.5);
  EXPECT_EQ(run1("Min", {h, g}).item_as_double({0}), -65504.0);
}

TEST(Variadic, Mean) {
  const Tensor a = f32({1.f, 5.f, 3.f}, {3});
  const Tensor b = f32({4.f, 2.f, 6.f}, {3});
  const Tensor c = f32({1.f}, {1});
  EXPECT_EQ(run1("Mean", {a, b, c}).to_float_vector(),
            (std::vector<float>{2.f, 8.f / 3, 10.f / 3}));
  EXPECT_EQ(run1("Mean", {a}).to_float_vector(), a.to_float_vector());
  // Broadcast sweep against the naive oracle, float64, two threads.
  const Tensor x = random_tensor<double>({2, 1, 5}, 11);
  const Tensor y = random_tensor<double>({3, 1}, 12);
  const Tensor z = random_tensor<double>({5}, 13);
  const Tensor m = run1("Mean", {x, y, z}, {}, 13, 2);
  ASSERT_EQ(m.shape(), (Shape{2, 3, 5}));
  ASSERT_EQ(m.dtype(), DType::kFloat64);
  for_each_index(m.shape(), [&](const Shape& idx) {
    const double want =
        (broadcast_read(x, idx) + broadcast_read(y, idx) + broadcast_read(z, idx)) / 3;
    ASSERT_NEAR(m.item_as_double(idx), want, 1e-12) << shape_str(idx);
  });
}

}  // namespace
}  // namespace tern::test
