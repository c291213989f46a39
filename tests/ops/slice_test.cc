// Slice: attribute form (opset < 10), input form (>= 10) with axes, negative axes,
// negative and large steps, clamping of out-of-range starts/ends, int32 arguments,
// every dtype, strided input, errors. Expected (start, step, size) per dim are worked out
// by hand from the ONNX Slice-13 rules (numpy semantics).
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

struct DimSel {
  int64_t start, step, size;
};

// y[i...] must equal x[start_d + i_d * step_d ...].
void check_slice(const Tensor& x, const std::vector<DimSel>& sel, const Tensor& y) {
  Shape want(sel.size());
  for (size_t d = 0; d < sel.size(); ++d) want[d] = sel[d].size;
  ASSERT_EQ(y.shape(), want);
  for_each_index(y.shape(), [&](const Shape& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) src[d] = sel[d].start + idx[d] * sel[d].step;
    ASSERT_EQ(y.item_as_double(idx), x.item_as_double(src)) << shape_str(idx);
  });
}

TEST(Slice, HandChecked1D) {
  const Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
  auto s = [&](std::vector<int64_t> st, std::vector<int64_t> en, std::vector<int64_t> steps) {
    std::vector<Tensor> in = {x, i64v(st), i64v(en), i64v({0}), i64v(steps)};
    return run1("Slice", in).to_float_vector();
  };
  EXPECT_EQ(s({2}, {5}, {1}), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(s({1}, {9}, {3}), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(s({-3}, {kInt64Max}, {1}), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(s({-1}, {kInt64Min}, {-1}), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(s({8}, {1}, {-3}), (std::vector<float>{8, 5, 2}));
  EXPECT_EQ(s({100}, {-100}, {-4}), (std::vector<float>{9, 5, 1}));
  EXPECT_EQ(s({5}, {2}, {1}), (std::vector<float>{}));
  EXPECT_EQ(s({2}, {5}, {-1}), (std::vector<float>{}));
  EXPECT_EQ(s({0}, {10}, {kInt64Max}), (std::vector<float>{0}));
  EXPECT_EQ(s({9}, {kInt64Min}, {kInt64Min}), (std::vector<float>{9}));
}

TEST(Slice, OnnxStyleCases) {
  const Tensor x = iota_tensor({20, 10, 5});
  // Two axes.
  check_slice(x, {{0, 1, 3}, {0, 1, 10}, {0, 1, 5}},
              run1("Slice", {x, i64v({0, 0}), i64v({3, 10}), i64v({0, 1}), i64v({1, 1})}));
  // Negative end; default axes and steps.
  check_slice(x, {{0, 1, 20}, {0, 1, 9}, {0, 1, 5}},
              run1("Slice", {x, i64v({0}), i64v({-1}), i64v({1})}));
  check_slice(x, {{0, 1, 3}, {0, 1, 10}, {0, 1, 5}}, run1("Slice", {x, i64v({0}), i64v({3})}));
  // Start and end out of bounds: clamped.
  check_slice(x, {{0, 1, 20}, {10, 1, 0}, {0, 1, 5}},
              run1("Slice", {x, i64v({1000}), i64v({1000}), i64v({1})}));
  check_slice(x, {{0, 1, 20}, {1, 1, 9}, {0, 1, 5}},
              run1("Slice", {x, i64v({1}), i64v({1000}), i64v({1})}));
  // Negative steps on all axes: x[20:0:-1, 10:0:-3, 4:1:-2].
  check_slice(
      x, {{19, -1, 19}, {9, -3, 3}, {4, -2, 2}},
      run1("Slice", {x, i64v({20, 10, 4}), i64v({0, 0, 1}), i64v({0, 1, 2}), i64v({-1, -3, -2})}));
  // Negative axes.
  check_slice(x, {{0, 1, 3}, {0, 1, 10}, {1, 1, 4}},
              run1("Slice", {x, i64v({0, 0, 1}), i64v({3, 10, 5}), i64v({0, -2, -1})}));
}

TEST(Slice, AttributesBeforeOpset10) {
  const Tensor x = iota_tensor({4, 6});
  check_slice(x, {{1, 1, 2}, {0, 1, 6}},
              run1("Slice", {x}, AttrMap().ints("starts", {1}).ints("ends", {3}), 9));
  check_slice(
      x, {{0, 1, 4}, {2, 1, 3}},
      run1("Slice", {x}, AttrMap().ints("starts", {-4}).ints("ends", {-1}).ints("axes", {1}), 7));
}

TEST(Slice, Int32ArgumentsEveryDtypeStridedInput) {
  const Tensor x = iota_tensor({5, 6}).transpose(0, 1);  // [6, 5], strided
  check_slice(x, {{4, -2, 3}, {1, 1, 3}},
              run1("Slice",
                   {x, i32({4, 1}, {2}), i32({-10, 4}, {2}), i32({0, 1}, {2}), i32({-2, 1}, {2})}));
  for (DType t : {DType::kFloat16, DType::kInt8, DType::kInt64, DType::kBool}) {
    Tensor v = Tensor::zeros(t, {4, 3});
    static_cast<uint8_t*>(v.raw_data())[dtype_size(t) * 11] = 1;  // last element
    const Tensor y = run1("Slice", {v, i64v({-1}), i64v({kInt64Min}), i64v({0}), i64v({-1})});
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), (Shape{4, 3}));
    EXPECT_EQ(static_cast<const uint8_t*>(y.raw_data())[dtype_size(t) * 2], 1) << dtype_name(t);
  }
  // int64 shape vectors stay exact (Shape -> Slice pattern).
  const int64_t big = (int64_t{1} << 62) + 3;
  EXPECT_EQ(run1("Slice", {i64v({1, 3, big, 7}), i64v({2}), i64v({3})}).to_int64_vector(),
            (std::vector<int64_t>{big}));
}

TEST(Slice, Errors) {
  const Tensor x = iota_tensor({4, 6});
  expect_error<InvalidArgument>(
      [&] {
        run1("Slice", {x, i64v({0}), i64v({2}), i64v({0}), i64v({0})});
      },
      {"Slice 'test_node'", "steps[0] is 0"});
  expect_error<ShapeError>(
      [&] {
        run1("Slice", {x, i64v({0, 1}), i64v({2})});
      },
      {"Slice 'test_node'", "equal lengths"});
  expect_error<ShapeError>(
      [&] {
        run1("Slice", {x, i64v({0}), i64v({2}), i64v({2})});
      },
      {"Slice 'test_node'", "axis 2", "rank-2"});
  expect_error<ShapeError>(
      [&] {
        run1("Slice", {x, i64v({0, 0}), i64v({2, 2}), i64v({1, -1})});
      },
      {"Slice 'test_node'", "twice"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Slice", {x, f32({0}, {1}), i64v({2})});
      },
      {"Slice 'test_node'", "starts", "float32"});
}

}  // namespace
}  // namespace tern::test
