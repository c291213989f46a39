// Expand: bidirectional broadcasting with the shape input, every dtype, errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

void check_expand(const Tensor& x, const Tensor& y) {
  for_each_index(y.shape(), [&](const Shape& idx) {
    ASSERT_EQ(y.item_as_double(idx), broadcast_read(x, idx)) << shape_str(idx);
  });
}

TEST(Expand, HandChecked) {
  const Tensor x = f32({1, 2, 3}, {3, 1});
  const Tensor y = run1("Expand", {x, i64v({2, 1, 4})});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  check_expand(x, y);
  EXPECT_EQ(run1("Expand", {x, i64v({3, 2})}).to_float_vector(),
            (std::vector<float>{1, 1, 2, 2, 3, 3}));
  // A shape smaller than the input: the input's dims win (bidirectional).
  EXPECT_EQ(run1("Expand", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), i64v({1})}).shape(), (Shape{2, 3}));
  EXPECT_EQ(run1("Expand", {Tensor::scalar_f32(4.f), i64v({2, 2})}).to_float_vector(),
            (std::vector<float>{4, 4, 4, 4}));
  EXPECT_EQ(run1("Expand", {x, i64v({0, 3, 5})}).shape(), (Shape{0, 3, 5}));
}

TEST(Expand, SweepDtypesAndStrided) {
  const Tensor base = random_tensor<float>({4, 6}, 12);
  const Tensor v = base.slice(1, 1, 2);  // [4, 1], strided
  check_expand(v, run1("Expand", {v, i64v({3, 4, 7})}, {}, 13, 3));
  const Tensor ints = i64({(int64_t{1} << 61) + 3, -5}, {2, 1, 1});
  const Tensor y = run1("Expand", {ints, i64v({1, 3, 2})});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector()[0], (int64_t{1} << 61) + 3);
  EXPECT_EQ(y.to_int64_vector()[11], -5);
  for (DType t : {DType::kFloat16, DType::kInt8, DType::kBool}) {
    const Tensor x = Tensor::zeros(t, {2});
    EXPECT_EQ(run1("Expand", {x, i64v({3, 2})}).dtype(), t);
  }
}

TEST(Expand, Errors) {
  const Tensor x = f32({1, 2, 3}, {3});
  expect_error<ShapeError>(
      [&] {
        run1("Expand", {x, i64v({2, 4})});
      },
      {"Expand 'test_node'", "[3]", "[2, 4]", "not broadcastable"});
  expect_error<ShapeError>(
      [&] {
        run1("Expand", {x, i64v({-1, 3})});
      },
      {"Expand 'test_node'", "negative"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Expand", {x, i32({3}, {1})});
      },
      {"Expand 'test_node'", "shape", "int64"});
}

}  // namespace
}  // namespace tern::test
