// Tile: hand-checked, sweep against out[i] = in[i % dim], every dtype, strided input,
// zero repeats, errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

void check_tile(const Tensor& x, const Tensor& y) {
  for_each_index(y.shape(), [&](const Shape& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) src[d] = idx[d] % x.shape()[d];
    ASSERT_EQ(y.item_as_double(idx), x.item_as_double(src)) << shape_str(idx);
  });
}

TEST(Tile, HandChecked) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  const Tensor y = run1("Tile", {x, i64v({1, 2})});
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(run1("Tile", {x, i64v({2, 1})}).to_float_vector(),
            (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(run1("Tile", {x, i64v({0, 3})}).shape(), (Shape{0, 6}));
  EXPECT_EQ(run1("Tile", {Tensor::scalar_f32(5.f), i64v({})}).to_float_vector(),
            (std::vector<float>{5.f}));
}

TEST(Tile, SweepAndDtypes) {
  const Tensor x = random_tensor<float>({2, 3, 4}, 4);
  for (const auto& reps : std::vector<std::vector<int64_t>>{
           {1, 1, 1}, {2, 1, 1}, {1, 3, 1}, {1, 1, 5}, {3, 2, 2}, {1, 2, 3}}) {
    const Tensor y = run1("Tile", {x, i64v(reps)}, {}, 13, 2);
    ASSERT_EQ(y.shape(), (Shape{2 * reps[0], 3 * reps[1], 4 * reps[2]}));
    check_tile(x, y);
  }
  const Tensor v = x.transpose(0, 2);  // strided
  check_tile(v, run1("Tile", {v, i64v({2, 2, 2})}));
  const Tensor ints = i64({int64_t{1} << 60, 7}, {2});
  EXPECT_EQ(run1("Tile", {ints, i64v({2})}).to_int64_vector(),
            (std::vector<int64_t>{int64_t{1} << 60, 7, int64_t{1} << 60, 7}));
  for (DType t : {DType::kFloat16, DType::kUint8, DType::kBool, DType::kInt32}) {
    EXPECT_EQ(run1("Tile", {Tensor::zeros(t, {2, 1}), i64v({1, 3})}).shape(), (Shape{2, 3}));
  }
}

TEST(Tile, Errors) {
  const Tensor x = f32({1, 2}, {2});
  expect_error<ShapeError>(
      [&] {
        run1("Tile", {x, i64v({2, 2})});
      },
      {"Tile 'test_node'", "repeats", "2 entries", "rank 1"});
  expect_error<ShapeError>(
      [&] {
        run1("Tile", {x, i64v({-1})});
      },
      {"Tile 'test_node'", "negative"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Tile", {x, i32({2}, {1})});
      },
      {"Tile 'test_node'", "repeats", "int64"});
}

}  // namespace
}  // namespace tern::test
