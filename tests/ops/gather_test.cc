// Gather: axes incl. negative, negative indices, scalar and 2-D indices, int32/int64
// indices, every data dtype, errors.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

// y[a..., j..., b...] = x[a..., idx[j...], b...]
void check_gather(const Tensor& x, const Tensor& idx, int axis, const Tensor& y) {
  const int ir = idx.rank();
  for_each_index(y.shape(), [&](const Shape& o) {
    std::vector<int64_t> jidx(o.begin() + axis, o.begin() + axis + ir);
    int64_t k = static_cast<int64_t>(idx.item_as_double(jidx));
    if (k < 0) k += x.dim(axis);
    std::vector<int64_t> src(o.begin(), o.begin() + axis);
    src.push_back(k);
    src.insert(src.end(), o.begin() + axis + ir, o.end());
    ASSERT_EQ(y.item_as_double(o), x.item_as_double(src)) << shape_str(o);
  });
}

TEST(Gather, HandChecked) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor y = run1("Gather", {x, i64({0, 2, -1}, {3})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 5, 6, 5, 6}));
  const Tensor c = run1("Gather", {x, i32({1}, {1, 1})}, AttrMap().i("axis", -1));
  EXPECT_EQ(c.shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(c.to_float_vector(), (std::vector<float>{2, 4, 6}));
}

TEST(Gather, ScalarIndexOnShapeVector) {
  // Shape -> Gather(scalar index) -> a 0-D int64: the PyTorch export pattern.
  const int64_t big = (int64_t{1} << 60) + 1;
  const Tensor y = run1("Gather", {i64v({1, 3, big, 640}), Tensor::scalar_i64(-2)});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{big}));
}

TEST(Gather, SweepAxesAndIndexShapes) {
  const Tensor x = random_tensor<float>({4, 5, 6}, 8);
  const Tensor idx2 = i64({0, -1, 3, 2, 2, -4}, {2, 3});
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    const Tensor y = run1("Gather", {x, idx2}, AttrMap().i("axis", axis));
    Shape want(x.shape().begin(), x.shape().begin() + a);
    want.insert(want.end(), {2, 3});
    want.insert(want.end(), x.shape().begin() + a + 1, x.shape().end());
    ASSERT_EQ(y.shape(), want);
    check_gather(x, idx2, a, y);
    const Tensor idx32 = i32({3, 0}, {2});
    check_gather(x, idx32, a, run1("Gather", {x, idx32}, AttrMap().i("axis", axis)));
  }
  // Strided data.
  const Tensor v = x.transpose(0, 2);
  check_gather(v, idx2, 1, run1("Gather", {v, idx2}, AttrMap().i("axis", 1)));
  // Empty indices.
  EXPECT_EQ(run1("Gather", {x, i64({}, {0})}, AttrMap().i("axis", 1)).shape(), (Shape{4, 0, 6}));
}

TEST(Gather, EveryDtype) {
  for (DType t : {DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32, DType::kBool}) {
    Tensor x = Tensor::zeros(t, {3, 2});
    std::memset(static_cast<uint8_t*>(x.raw_data()) + 4 * dtype_size(t), 1, dtype_size(t));
    const Tensor y = run1("Gather", {x, i64({2, 0}, {2})});
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(static_cast<const uint8_t*>(y.raw_data())[0], 1) << dtype_name(t);
    EXPECT_EQ(static_cast<const uint8_t*>(y.raw_data())[2 * dtype_size(t)], 0) << dtype_name(t);
  }
}

TEST(Gather, Errors) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_error<InvalidArgument>(
      [&] {
        run1("Gather", {x, i64({0, 3}, {2})});
      },
      {"Gather 'test_node'", "index 3", "axis 0", "size 3", "-3..2"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Gather", {x, i32({-4}, {1})});
      },
      {"Gather 'test_node'", "index -4"});
  expect_error<ShapeError>(
      [&] {
        run1("Gather", {x, i64({0}, {1})}, AttrMap().i("axis", 2));
      },
      {"Gather 'test_node'", "axis 2", "rank-2"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Gather", {x, f32({0}, {1})});
      },
      {"Gather 'test_node'", "indices", "float32"});
}

}  // namespace
}  // namespace tern::test
