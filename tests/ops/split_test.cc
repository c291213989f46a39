// Split: explicit sizes as attribute (opset < 13) and input (>= 13), negative axis,
// every dtype, equal split, errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Split, AttributeSizesBeforeOpset13) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {6});
  const auto y = run_op("Split", AttrMap().ints("split", {2, 4}), {x}, 11, 2);
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{1, 2}));
  EXPECT_EQ(y[1].to_float_vector(), (std::vector<float>{3, 4, 5, 6}));
}

TEST(Split, InputSizesFromOpset13AndNegativeAxis) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  const auto y = run_op("Split", AttrMap().i("axis", -1), {x, i64v({1, 0, 3})}, 13, 3);
  EXPECT_EQ(y[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{1, 5}));
  EXPECT_EQ(y[1].shape(), (Shape{2, 0}));
  EXPECT_EQ(y[2].to_float_vector(), (std::vector<float>{2, 3, 4, 6, 7, 8}));
  const auto rows = run_op("Split", {}, {x, i64v({1, 1})}, 13, 2);
  EXPECT_EQ(rows[1].to_float_vector(), (std::vector<float>{5, 6, 7, 8}));
  EXPECT_TRUE(rows[1].is_contiguous());
}

TEST(Split, EveryDtypeAndStridedInput) {
  const Tensor x = i64({10, 11, 12, 13, 14, 15}, {3, 2}).transpose(0, 1);  // [2, 3] strided
  const auto y = run_op("Split", AttrMap().i("axis", 1), {x, i64v({2, 1})}, 13, 2);
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{10, 12, 11, 13}));
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{14, 15}));
  const Tensor b = make<uint8_t>({1, 0, 1, 1}, {4});
  const auto yb = run_op("Split", AttrMap().ints("split", {3, 1}), {b}, 11, 2);
  EXPECT_EQ(yb[0].to_int64_vector(), (std::vector<int64_t>{1, 0, 1}));
}

TEST(Split, EqualSplitWithoutSizes) {
  const auto y = run_op("Split", {}, {f32({1, 2, 3, 4, 5, 6}, {6})}, 13, 3);
  EXPECT_EQ(y[0].to_float_vector(), (std::vector<float>{1, 2}));
  EXPECT_EQ(y[1].to_float_vector(), (std::vector<float>{3, 4}));
  EXPECT_EQ(y[2].to_float_vector(), (std::vector<float>{5, 6}));
  expect_error<ShapeError>([] { run_op("Split", {}, {f32({1, 2, 3, 4}, {4})}, 13, 3); },
                           {"Split 'test_node'", "3 equal parts"});
}

TEST(Split, Errors) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {6});
  expect_error<ShapeError>(
      [&] {
        run_op("Split", {}, {x, i64v({2, 2})}, 13, 2);
      },
      {"Split 'test_node'", "[2, 2]", "sums to 4", "size 6"});
  expect_error<ShapeError>(
      [&] {
        run_op("Split", {}, {x, i64v({7, -1})}, 13, 2);
      },
      {"Split 'test_node'", "negative"});
  expect_error<ShapeError>(
      [&] {
        run_op("Split", AttrMap().i("axis", 1), {x, i64v({6})}, 13, 1);
      },
      {"Split 'test_node'", "axis 1", "rank-1"});
}

}  // namespace
}  // namespace tern::test
