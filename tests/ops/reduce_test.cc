// ReduceMean, ReduceMax, ReduceSum, ArgMax: hand-checked values, a sweep over axis sets
// (adjacent and not) against a naive reference, keepdims, negative axes, ReduceSum-13's
// axes input and noop_with_empty_axes, integer dtypes, empty reductions, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Reduce, HandChecked) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(run1("ReduceSum", {x, i64v({1})}).to_float_vector(), (std::vector<float>{6, 15}));
  EXPECT_EQ(run1("ReduceSum", {x, i64v({1})}).shape(), (Shape{2, 1}));
  EXPECT_EQ(run1("ReduceMean", {x}, AttrMap().ints("axes", {0}).i("keepdims", 0)).to_float_vector(),
            (std::vector<float>{2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(run1("ReduceMax", {x}, AttrMap().ints("axes", {-1}).i("keepdims", 0)).to_float_vector(),
            (std::vector<float>{3, 6}));
  // No axes: all of them.
  const Tensor all = run1("ReduceMean", {x});
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(all.to_float_vector(), (std::vector<float>{3.5f}));
  EXPECT_EQ(run1("ReduceSum", {x}, AttrMap().i("keepdims", 0)).shape(), Shape{});
}

// Naive reference: for each output index, loop over all input elements mapping to it.
void check_reduce(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes,
                  bool keepdims, int opset) {
  const int rank = x.rank();
  std::vector<bool> red(rank, axes.empty());
  for (int64_t a : axes) red[a < 0 ? a + rank : a] = true;
  AttrMap attrs;
  attrs.i("keepdims", keepdims ? 1 : 0);
  std::vector<Tensor> inputs = {x};
  if (op == "ReduceSum" && opset >= 13) {
    if (!axes.empty()) inputs.push_back(i64v(axes));
  } else if (!axes.empty()) {
    attrs.ints("axes", axes);
  }
  const Tensor y = run1(op, inputs, attrs, opset, 2);
  Shape kept_shape;
  for (int d = 0; d < rank; ++d) {
    if (!red[d])
      kept_shape.push_back(x.dim(d));
    else if (keepdims)
      kept_shape.push_back(1);
  }
  ASSERT_EQ(y.shape(), kept_shape);
  std::vector<double> sum(y.numel(), 0.0), abs_sum(y.numel(), 0.0), mx(y.numel(), -INFINITY);
  std::vector<int64_t> cnt(y.numel(), 0);
  for_each_index(x.shape(), [&](const Shape& idx) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) {
      if (!red[d]) o = o * x.dim(d) + idx[d];
    }
    const double v = x.item_as_double(idx);
    sum[o] += v;
    abs_sum[o] += std::fabs(v);
    mx[o] = std::max(mx[o], v);
    ++cnt[o];
  });
  const std::vector<float> got = y.to_float_vector();
  for (size_t o = 0; o < got.size(); ++o) {
    double want = op == "ReduceSum" ? sum[o] : op == "ReduceMax" ? mx[o] : sum[o] / cnt[o];
    // Sequential float summation of n terms: |error| <= (n - 1) * 2^-24 * sum |v| (plus
    // one rounding of the division for a mean). Max is exact.
    const double sum_tol = static_cast<double>(cnt[o]) * 0x1p-24 * abs_sum[o];
    const double tol = op == "ReduceMax"   ? 0.0
                       : op == "ReduceSum" ? sum_tol
                                           : sum_tol / cnt[o] + 0x1p-24 * std::fabs(want);
    ASSERT_NEAR(got[o], want, tol) << op << " axes " << shape_str(axes) << " out " << o;
  }
}

TEST(Reduce, SweepOfAxisSets) {
  const Tensor x = random_tensor<float>({3, 4, 5, 6}, 31);
  const std::vector<std::vector<int64_t>> axis_sets = {
      {},     {0},    {1},    {3},       {-1},      {1, 2},      {2, 3},
      {0, 2}, {0, 3}, {1, 3}, {0, 1, 3}, {0, 2, 3}, {0, 1, 2, 3}};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
    for (const auto& axes : axis_sets) {
      for (bool keep : {true, false}) check_reduce(op, x, axes, keep, 13);
    }
  }
  // ReduceSum with the attribute form (opset 11) and a strided input.
  const Tensor view = x.transpose(1, 3);
  check_reduce("ReduceSum", view, {0, 2}, true, 11);
  check_reduce("ReduceMean", view, {1}, false, 13);
  // Size-1 dims in and around the reduced block.
  check_reduce("ReduceMean", random_tensor<float>({1, 7, 1, 9}, 5), {1, 2}, true, 13);
  check_reduce("ReduceMax", random_tensor<float>({2, 1, 3}, 6), {1}, false, 13);
}

TEST(Reduce, ReduceSum13AxesInputAndNoop) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(run1("ReduceSum", {x, i64v({-2})}, AttrMap().i("keepdims", 0)).to_float_vector(),
            (std::vector<float>{4, 6}));
  // No axes (omitted or empty): all axes, unless noop_with_empty_axes.
  EXPECT_EQ(run1("ReduceSum", {x, i64v({})}).to_float_vector(), (std::vector<float>{10}));
  const Tensor noop = run1("ReduceSum", {x}, AttrMap().i("noop_with_empty_axes", 1));
  EXPECT_EQ(noop.shape(), (Shape{2, 2}));
  EXPECT_EQ(noop.to_float_vector(), x.to_float_vector());
  EXPECT_EQ(run1("ReduceSum", {x, i64v({})}, AttrMap().i("noop_with_empty_axes", 1)).shape(),
            (Shape{2, 2}));
}

TEST(Reduce, IntegerDtypes) {
  const int64_t big = int64_t{1} << 55;
  const Tensor x = i64({big, 1, big, 2, -7, 3}, {3, 2});
  EXPECT_EQ(run1("ReduceSum", {x, i64v({0})}).to_int64_vector(),
            (std::vector<int64_t>{2 * big - 7, 6}));
  EXPECT_EQ(run1("ReduceMax", {x}, AttrMap().ints("axes", {1})).to_int64_vector(),
            (std::vector<int64_t>{big, big, 3}));
  // Integer mean truncates toward zero.
  EXPECT_EQ(run1("ReduceMean", {i32({1, 2, -7, 0}, {2, 2})}, AttrMap().ints("axes", {1}))
                .to_int64_vector(),
            (std::vector<int64_t>{1, -3}));
}

TEST(Reduce, EmptyReductions) {
  const Tensor x = Tensor::empty(DType::kFloat32, {2, 0});
  EXPECT_EQ(run1("ReduceSum", {x, i64v({1})}).to_float_vector(), (std::vector<float>{0, 0}));
  const std::vector<float> m =
      run1("ReduceMax", {x}, AttrMap().ints("axes", {1})).to_float_vector();
  EXPECT_EQ(m[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(
      std::isnan(run1("ReduceMean", {x}, AttrMap().ints("axes", {1})).to_float_vector()[0]));
  // Reducing the non-empty axis of an empty tensor gives an empty output.
  EXPECT_EQ(run1("ReduceSum", {x, i64v({0})}).shape(), (Shape{1, 0}));
}

TEST(Reduce, Errors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ShapeError>([&] { run1("ReduceMean", {x}, AttrMap().ints("axes", {2})); },
                           {"ReduceMean 'test_node'", "axis 2", "rank-2"});
  expect_error<ShapeError>(
      [&] {
        run1("ReduceSum", {x, i64v({0, -2})});
      },
      {"ReduceSum 'test_node'", "twice"});
  expect_error<UnsupportedOpError>([&] { run1("ReduceMax", {make<uint8_t>({1}, {1})}); },
                                   {"ReduceMax 'test_node'", "uint8"});
}

TEST(ArgMax, HandCheckedAndTies) {
  const Tensor x = f32({1, 5, 5, 2, 9, 0}, {2, 3});
  EXPECT_EQ(run1("ArgMax", {x}, AttrMap().i("axis", 1)).to_int64_vector(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(run1("ArgMax", {x}, AttrMap().i("axis", 1)).shape(), (Shape{2, 1}));
  EXPECT_EQ(
      run1("ArgMax", {x}, AttrMap().i("axis", 1).i("select_last_index", 1), 12).to_int64_vector(),
      (std::vector<int64_t>{2, 1}));
  const Tensor a0 = run1("ArgMax", {x}, AttrMap().i("keepdims", 0));
  EXPECT_EQ(a0.dtype(), DType::kInt64);
  EXPECT_EQ(a0.shape(), (Shape{3}));
  EXPECT_EQ(a0.to_int64_vector(), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(run1("ArgMax", {i64({3, -1, 7, 7}, {4})}, AttrMap().i("axis", -1)).to_int64_vector(),
            (std::vector<int64_t>{2}));
}

TEST(ArgMax, SweepAgainstNaive) {
  const Tensor x = random_tensor<float>({3, 4, 5}, 77);
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    const Tensor y = run1("ArgMax", {x}, AttrMap().i("axis", axis).i("keepdims", 0));
    for_each_index(y.shape(), [&](const Shape& o) {
      std::vector<int64_t> idx(o.begin(), o.end());
      idx.insert(idx.begin() + a, 0);
      int64_t best = 0;
      double bv = -INFINITY;
      for (int64_t r = 0; r < x.dim(a); ++r) {
        idx[a] = r;
        if (x.item_as_double(idx) > bv) {
          bv = x.item_as_double(idx);
          best = r;
        }
      }
      ASSERT_EQ(y.item_as_double(o), best);
    });
  }
  expect_error<ShapeError>([&] { run1("ArgMax", {x}, AttrMap().i("axis", 3)); },
                           {"ArgMax 'test_node'", "axis 3"});
  expect_error<ShapeError>(
      [&] {
        run1("ArgMax", {Tensor::empty(DType::kFloat32, {2, 0})}, AttrMap().i("axis", 1));
      },
      {"ArgMax 'test_node'", "size 0"});
}

}  // namespace
}  // namespace tern::test
