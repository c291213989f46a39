// Concat: axes incl. negative, every dtype, zero-size and strided inputs, int64 shape
// vectors, errors.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Concat, HandChecked) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2});
  const Tensor b = f32({5, 6}, {1, 2});
  const Tensor c = f32({7, 8, 9, 10}, {2, 2});
  EXPECT_EQ(run1("Concat", {a, b}, AttrMap().i("axis", 0)).to_float_vector(),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const Tensor y = run1("Concat", {a, c}, AttrMap().i("axis", -1));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 7, 8, 3, 4, 9, 10}));
  // Narrow pieces on the last axis ([2, 1] has output stride 4 per element).
  const Tensor n =
      run1("Concat", {f32({0, 1}, {2, 1}), a, f32({9, 9}, {2, 1})}, AttrMap().i("axis", 1));
  EXPECT_EQ(n.to_float_vector(), (std::vector<float>{0, 1, 2, 9, 1, 3, 4, 9}));
}

TEST(Concat, ShapeVectorsInt64) {
  // The PyTorch export pattern: Concat of 1-element int64 tensors into a Reshape target.
  const Tensor y =
      run1("Concat", {i64v({1}), i64v({-1}), i64v({int64_t{1} << 40})}, AttrMap().i("axis", 0));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{1, -1, int64_t{1} << 40}));
}

TEST(Concat, SweepAgainstNaive) {
  const std::vector<Shape> parts = {{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 5, 4}};
  std::vector<Tensor> inputs;
  uint32_t seed = 40;
  for (const Shape& s : parts) inputs.push_back(random_tensor<float>(s, seed++));
  // One strided input: a transposed view of the right shape.
  inputs.push_back(random_tensor<float>({2, 4, 2}, seed++).transpose(1, 2));
  const Tensor y = run1("Concat", inputs, AttrMap().i("axis", 1), 13, 2);
  ASSERT_EQ(y.shape(), (Shape{2, 11, 4}));
  for_each_index(y.shape(), [&](const Shape& idx) {
    int64_t k = idx[1];
    size_t i = 0;
    while (k >= inputs[i].dim(1)) k -= inputs[i++].dim(1);
    ASSERT_EQ(y.item_as_double(idx), inputs[i].item_as_double({idx[0], k, idx[2]}));
  });
}

TEST(Concat, EveryDtype) {
  for (DType t : {DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32, DType::kBool}) {
    Tensor a = Tensor::zeros(t, {2, 2});
    Tensor b = Tensor::empty(t, {2, 1});
    std::memset(b.raw_data(), 1, b.nbytes());
    const Tensor y = run1("Concat", {a, b}, AttrMap().i("axis", 1));
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    const auto* bytes = static_cast<const uint8_t*>(y.raw_data());
    const size_t es = dtype_size(t);
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 3; ++c) {
        for (size_t k = 0; k < es; ++k) {
          EXPECT_EQ(bytes[(r * 3 + c) * es + k], c == 2 ? 1 : 0) << dtype_name(t);
        }
      }
    }
  }
}

TEST(Concat, Errors) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, f32({1, 2, 3}, {1, 3})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "[1, 3]", "[2, 2]", "axis 0"});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, f32({1, 2}, {2})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "[2]"});
  expect_error<ShapeError>(
      [&] {
        run1("Concat", {a, a}, AttrMap().i("axis", 2));
      },
      {"Concat 'test_node'", "axis 2", "rank-2", "-2..1"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Concat", {a, i64({1, 2}, {1, 2})}, AttrMap().i("axis", 0));
      },
      {"Concat 'test_node'", "input 1", "float32", "int64"});
  expect_error<ModelError>([&] { run1("Concat", {a, a}); }, {"Concat 'test_node'", "axis"});
}

}  // namespace
}  // namespace tern::test
