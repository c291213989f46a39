// ReduceMean, ReduceMax, ReduceSum, ArgMax: hand-checked values, a sweep over axis sets
// (adjacent and not) against a naive reference, keepdims, negative axes, ReduceSum-13's
// axes input and noop_with_empty_axes, integer dtypes, empty reductions, errors.
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp, ArgMin: the same sweeps against a double-precision naive reference,
// float64 and integer inputs, the opset-18 axes input, empty-reduction identities.
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

// Naive double reference of the kinds added after Sum/Mean/Max.
double naive_reduce(const std::string& op, const std::vector<double>& v) {
  double acc = 0;
  if (op == "ReduceMin") {
    acc = INFINITY;
    for (double x : v) acc = std::min(acc, x);
  } else if (op == "ReduceProd") {
    acc = 1;
    for (double x : v) acc *= x;
  } else if (op == "ReduceL1") {
    for (double x : v) acc += std::fabs(x);
  } else if (op == "ReduceL2") {
    for (double x : v) acc += x * x;
    acc = std::sqrt(acc);
  } else if (op == "ReduceSumSquare") {
    for (double x : v) acc += x * x;
  } else if (op == "ReduceLogSum") {
    for (double x : v) acc += x;
    acc = std::log(acc);
  } else if (op == "ReduceLogSumExp") {
    for (double x : v) acc += std::exp(x);
    acc = std::log(acc);
  }
  return acc;
}

void check_new_kind(const std::string& op, const Tensor& x, const std::vector<int64_t>& axes,
                    bool keepdims, int opset) {
  const int rank = x.rank();
  std::vector<bool> red(rank, axes.empty());
  for (int64_t a : axes) red[a < 0 ? a + rank : a] = true;
  AttrMap attrs;
  attrs.i("keepdims", keepdims ? 1 : 0);
  std::vector<Tensor> inputs = {x};
  if (opset >= 18) {
    if (!axes.empty()) inputs.push_back(i64v(axes));
  } else if (!axes.empty()) {
    attrs.ints("axes", axes);
  }
  const Tensor y = run1(op, inputs, attrs, opset, 2);
  Shape want_shape;
  for (int d = 0; d < rank; ++d) {
    if (!red[d]) {
      want_shape.push_back(x.dim(d));
    } else if (keepdims) {
      want_shape.push_back(1);
    }
  }
  ASSERT_EQ(y.shape(), want_shape);
  ASSERT_EQ(y.dtype(), x.dtype());
  std::vector<std::vector<double>> groups(y.numel());
  for_each_index(x.shape(), [&](const Shape& idx) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) {
      if (!red[d]) o = o * x.dim(d) + idx[d];
    }
    groups[o].push_back(x.item_as_double(idx));
  });
  for (int64_t o = 0; o < y.numel(); ++o) {
    const double want = naive_reduce(op, groups[o]);
    const double got = y.item_as_double([&] {
      std::vector<int64_t> flat(y.rank(), 0);
      int64_t r = o;
      for (int d = y.rank() - 1; d >= 0; --d) {
        flat[d] = r % y.dim(d);
        r /= y.dim(d);
      }
      return flat;
    }());
    // float32 outputs: a few roundings of float arithmetic over <= 120 terms.
    const double tol = x.dtype() == DType::kFloat32
                           ? 1e-5 * (1 + std::fabs(want)) * groups[o].size()
                           : 1e-12 * (1 + std::fabs(want)) * groups[o].size();
    ASSERT_NEAR(got, want, tol) << op << " axes " << shape_str(axes) << " out " << o;
  }
}

const char* const kNewKinds[] = {"ReduceMin",       "ReduceProd",   "ReduceL1",       "ReduceL2",
                                 "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

TEST(Reduce, NewKindsSweepOfAxisSets) {
  // Positive values keep LogSum defined; [0.5, 1.5) keeps products of 120 terms in range.
  const Tensor x = random_tensor<float>({3, 4, 5, 2}, 41, 0.5, 1.5);
  const std::vector<std::vector<int64_t>> axis_sets = {{},     {0},    {3},      {-1},
                                                       {1, 2}, {0, 2}, {-4, -1}, {0, 1, 3}};
  for (const char* op : kNewKinds) {
    for (const auto& axes : axis_sets) {
      for (bool keep : {true, false}) {
        check_new_kind(op, x, axes, keep, 13);
        check_new_kind(op, x, axes, keep, 18);
      }
    }
    // A strided view, odd sizes, float64.
    check_new_kind(op, random_tensor<float>({5, 3, 7}, 42, 0.5, 1.5).transpose(0, 2), {0, 2}, false,
                   13);
    check_new_kind(op, random_tensor<double>({3, 1, 5}, 43, 0.5, 1.5), {0, 1}, true, 13);
  }
  // Signed values for the kinds defined on them.
  const Tensor s = random_tensor<float>({4, 3, 5}, 44, -2.0, 2.0);
  for (const char* op :
       {"ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"}) {
    check_new_kind(op, s, {0, 2}, true, 13);
    check_new_kind(op, s, {1}, false, 13);
  }
}

TEST(Reduce, NewKindsHandCheckedAndIntegers) {
  const Tensor x = f32({1, -2, 3, 4, 5, -6}, {2, 3});
  EXPECT_EQ(run1("ReduceMin", {x}, AttrMap().ints("axes", {1})).to_float_vector(),
            (std::vector<float>{-2, -6}));
  EXPECT_EQ(run1("ReduceProd", {x}, AttrMap().ints("axes", {0})).to_float_vector(),
            (std::vector<float>{4, -10, -18}));
  EXPECT_EQ(run1("ReduceL1", {x}).to_float_vector(), (std::vector<float>{21}));
  EXPECT_EQ(run1("ReduceSumSquare", {x}, AttrMap().ints("axes", {1})).to_float_vector(),
            (std::vector<float>{14, 77}));
  // LogSumExp stays finite where exp overflows float.
  const Tensor big = f32({1000, 1000}, {2});
  EXPECT_NEAR(run1("ReduceLogSumExp", {big}).to_float_vector()[0], 1000 + std::log(2.0), 1e-3);
  const Tensor xi = i32({1, -2, 3, 4, 5, -6}, {2, 3});
  EXPECT_EQ(run1("ReduceMin", {xi}, AttrMap().ints("axes", {1})).to_int64_vector(),
            (std::vector<int64_t>{-2, -6}));
  EXPECT_EQ(run1("ReduceProd", {xi}, AttrMap().ints("axes", {0})).to_int64_vector(),
            (std::vector<int64_t>{4, -10, -18}));
  EXPECT_EQ(run1("ReduceL1", {i64({-3, 4}, {2})}).to_int64_vector(), (std::vector<int64_t>{7}));
  EXPECT_EQ(run1("ReduceL2", {i64({-3, 4}, {2})}).to_int64_vector(), (std::vector<int64_t>{5}));
  EXPECT_EQ(run1("ReduceSumSquare", {i64({-3, 4}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{25}));
  // Opset 18: axes input, noop_with_empty_axes.
  const Tensor noop = run1("ReduceMin", {x}, AttrMap().i("noop_with_empty_axes", 1), 18);
  EXPECT_EQ(noop.to_float_vector(), x.to_float_vector());
  EXPECT_EQ(run1("ReduceMax", {x, i64v({-1})}, AttrMap().i("keepdims", 0), 18).to_float_vector(),
            (std::vector<float>{3, 5}));
}

TEST(Reduce, NewKindsErrors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ModelError>(
      [&] {
        run1("ReduceMin", {x, i64v({0})}, {}, 13);
      },
      {"ReduceMin 'test_node'", "one input"});
  expect_error<ShapeError>([&] { run1("ReduceL2", {x}, AttrMap().ints("axes", {-3})); },
                           {"ReduceL2 'test_node'", "axis -3"});
  expect_error<ShapeError>(
      [&] {
        run1("ReduceLogSumExp", {x, i64v({1, 1})}, {}, 18);
      },
      {"ReduceLogSumExp 'test_node'", "twice"});
  expect_error<UnsupportedOpError>([&] { run1("ReduceProd", {make<int8_t>({1}, {1})}); },
                                   {"ReduceProd 'test_node'", "int8"});
}

TEST(Reduce, NewKindsEmptyIdentities) {
  const Tensor x = Tensor::empty(DType::kFloat32, {2, 0});
  auto first = [&](const char* op) {
    return run1(op, {x}, AttrMap().ints("axes", {1})).to_float_vector()[0];
  };
  EXPECT_EQ(first("ReduceMin"), INFINITY);
  EXPECT_EQ(first("ReduceProd"), 1.0f);
  EXPECT_EQ(first("ReduceL1"), 0.0f);
  EXPECT_EQ(first("ReduceL2"), 0.0f);
  EXPECT_EQ(first("ReduceSumSquare"), 0.0f);
  EXPECT_EQ(first("ReduceLogSum"), -INFINITY);
  EXPECT_EQ(first("ReduceLogSumExp"), -INFINITY);
}

TEST(ArgMin, HandCheckedTiesAndSweep) {
  const Tensor x = f32({1, 0, 0, 2, -9, 5}, {2, 3});
  EXPECT_EQ(run1("ArgMin", {x}, AttrMap().i("axis", 1)).to_int64_vector(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(
      run1("ArgMin", {x}, AttrMap().i("axis", -1).i("select_last_index", 1), 12).to_int64_vector(),
      (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(run1("ArgMin", {x}, AttrMap().i("keepdims", 0)).to_int64_vector(),
            (std::vector<int64_t>{0, 1, 0}));
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    Tensor t;
    switch (dt) {
      case DType::kFloat64:
        t = random_tensor<double>({3, 4, 5}, 90);
        break;
      case DType::kInt32:
        t = random_tensor<int32_t>({3, 4, 5}, 91, -3, 3);
        break;
      case DType::kInt64:
        t = random_tensor<int64_t>({3, 4, 5}, 92, -3, 3);
        break;
      default:
        t = random_tensor<float>({3, 4, 5}, 93);
        break;
    }
    for (int axis = -3; axis < 3; ++axis) {
      for (int last = 0; last < 2; ++last) {
        const int a = axis < 0 ? axis + 3 : axis;
        const Tensor y = run1(
            "ArgMin", {t}, AttrMap().i("axis", axis).i("keepdims", 0).i("select_last_index", last));
        for_each_index(y.shape(), [&](const Shape& o) {
          std::vector<int64_t> idx(o.begin(), o.end());
          idx.insert(idx.begin() + a, 0);
          int64_t best = 0;
          double bv = INFINITY;
          for (int64_t r = 0; r < t.dim(a); ++r) {
            idx[a] = r;
            const double v = t.item_as_double(idx);
            if (v < bv || (last && v == bv)) {
              bv = v;
              best = r;
            }
          }
          ASSERT_EQ(y.item_as_double(o), best) << dtype_name(dt) << " axis " << axis;
        });
      }
    }
  }
  expect_error<UnsupportedOpError>([&] { run1("ArgMin", {make<uint8_t>({1}, {1})}); },
                                   {"ArgMin 'test_node'", "uint8"});
}

// D6: integer LogSum/LogSumExp/L2 whose double result is NaN, infinite or out of range
// convert with saturation (NaN -> 0) instead of an undefined cast.
TEST(Reduce, IntegerNonFiniteResultsSaturate) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  // log(0) = -inf -> lowest; log(-3) = NaN -> 0.
  EXPECT_EQ(run1("ReduceLogSum", {i32({0}, {1})}).to_int64_vector(),
            (std::vector<int64_t>{kMin32}));
  EXPECT_EQ(run1("ReduceLogSum", {i32({-1, -2}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(run1("ReduceLogSum", {i64({-5}, {1})}).to_int64_vector(), (std::vector<int64_t>{0}));
  // sqrt(2) * INT32_MAX does not fit int32: saturates to INT32_MAX.
  EXPECT_EQ(run1("ReduceL2", {i32({kMax32, kMax32}, {2})}).to_int64_vector(),
            (std::vector<int64_t>{kMax32}));
  // An empty LogSumExp is -inf -> lowest, an empty LogSum log(0) likewise.
  const Tensor empty = Tensor::empty(DType::kInt64, {2, 0});
  EXPECT_EQ(run1("ReduceLogSumExp", {empty}, AttrMap().ints("axes", {1})).to_int64_vector(),
            (std::vector<int64_t>(2, std::numeric_limits<int64_t>::min())));
  EXPECT_EQ(
      run1("ReduceLogSum", {Tensor::empty(DType::kInt32, {2, 0})}, AttrMap().ints("axes", {1}))
          .to_int64_vector(),
      (std::vector<int64_t>(2, kMin32)));
}

}  // namespace
}  // namespace tern::test
