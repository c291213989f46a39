// Gather: axes incl. negative, negative indices, scalar and 2-D indices, int32/int64
// indices, every data dtype, errors. GatherElements and GatherND: sweeps against naive
// references (every axis, negative indices, batch_dims), several dtypes, errors.
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

TEST(GatherElements, SweepAgainstNaive) {
  const Shape ds = {3, 4, 5};
  for (int axis : {0, 1, 2, -1, -2, -3}) {
    const int a = axis < 0 ? axis + 3 : axis;
    Shape is = {2, 3, 4};
    is[a] = 6;  // the axis dim of indices may exceed data's
    const Tensor data = random_tensor<float>(ds, 30 + axis);
    const Tensor idx = random_tensor<int64_t>(is, 40 + axis, -ds[a], ds[a] - 1);
    const Tensor y = run1("GatherElements", {data, idx}, AttrMap().i("axis", axis));
    ASSERT_EQ(y.shape(), is);
    for_each_index(is, [&](const Shape& o) {
      std::vector<int64_t> src(o.begin(), o.end());
      const int64_t k = static_cast<int64_t>(idx.item_as_double(o));
      src[a] = k < 0 ? k + ds[a] : k;
      ASSERT_EQ(y.item_as_double(o), data.item_as_double(src)) << "axis " << axis;
    });
  }
  EXPECT_EQ(run1("GatherElements", {i64({1, 2, 3, 4}, {2, 2}), i32({0, -1, 1, 0}, {2, 2})},
                 AttrMap().i("axis", 1))
                .to_int64_vector(),
            (std::vector<int64_t>{1, 2, 4, 3}));
  EXPECT_EQ(run1("GatherElements", {make<uint8_t>({5, 6, 7}, {3}), i64({2, 2, 0, 1}, {4})})
                .to_int64_vector(),
            (std::vector<int64_t>{7, 7, 5, 6}));
}

TEST(GatherElements, Errors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<InvalidArgument>(
      [&] {
        run1("GatherElements", {x, i64({0, 2}, {1, 2})});
      },
      {"GatherElements 'test_node'", "index 2"});
  expect_error<ShapeError>(
      [&] {
        run1("GatherElements", {x, i64({0, 1}, {2})});
      },
      {"GatherElements 'test_node'", "rank"});
  expect_error<ShapeError>(
      [&] {
        run1("GatherElements", {x, i64({0, 0, 0}, {1, 3})});
      },
      {"GatherElements 'test_node'", "dim 1"});
}

TEST(GatherND, SweepAgainstNaive) {
  const Shape ds = {2, 3, 4, 2};
  const Tensor data = random_tensor<float>(ds, 50);
  for (int64_t b = 0; b <= 1; ++b) {
    for (int64_t m = 1; m <= 4 - b; ++m) {
      Shape is;
      if (b == 1) is.push_back(2);
      is.insert(is.end(), {3, m});
      // Index tuple element k addresses data dim b + k: draw in [-size, size).
      Tensor idx = Tensor::empty(DType::kInt64, is);
      Lcg rng(static_cast<uint32_t>(60 + 10 * b + m));
      for (int64_t i = 0; i < idx.numel(); ++i) {
        const int64_t n = ds[b + i % m];
        idx.data<int64_t>()[i] = rng.uniform_int64(-n, n - 1);
      }
      const Tensor y = run1("GatherND", {data, idx}, AttrMap().i("batch_dims", b));
      Shape want(is.begin(), is.end() - 1);
      want.insert(want.end(), ds.begin() + b + m, ds.end());
      ASSERT_EQ(y.shape(), want);
      for_each_index(want, [&](const Shape& o) {
        std::vector<int64_t> src;
        if (b == 1) src.push_back(o[0]);
        std::vector<int64_t> tuple_pos(o.begin(), o.begin() + (is.size() - 1));
        tuple_pos.push_back(0);
        for (int64_t k = 0; k < m; ++k) {
          tuple_pos.back() = k;
          int64_t v = static_cast<int64_t>(idx.item_as_double(tuple_pos));
          if (v < 0) v += ds[b + k];
          src.push_back(v);
        }
        src.insert(src.end(), o.begin() + (is.size() - 1), o.end());
        ASSERT_EQ(y.item_as_double(o), data.item_as_double(src)) << "b " << b << " m " << m;
      });
    }
  }
  EXPECT_EQ(
      run1("GatherND", {i32({0, 1, 2, 3}, {2, 2}), i64({1, 0, 0, 1}, {2, 2})}).to_int64_vector(),
      (std::vector<int64_t>{2, 1}));
}

TEST(GatherND, Errors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ShapeError>(
      [&] {
        run1("GatherND", {x, i64({0, 0, 0}, {1, 3})});
      },
      {"GatherND 'test_node'", "last indices dim 3"});
  expect_error<InvalidArgument>(
      [&] {
        run1("GatherND", {x, i64({0, 2}, {1, 2})});
      },
      {"GatherND 'test_node'", "index 2"});
  expect_error<ShapeError>(
      [&] {
        run1("GatherND", {x, i64({0, 0, 0}, {3, 1})}, AttrMap().i("batch_dims", 1));
      },
      {"GatherND 'test_node'", "batch dim 0"});
  expect_error<ModelError>(
      [&] {
        run1("GatherND", {x, i64({0}, {1, 1})}, AttrMap().i("batch_dims", -1));
      },
      {"GatherND 'test_node'", "batch_dims"});
}

}  // namespace
}  // namespace tern::test
