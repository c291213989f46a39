// NonZero and Compress: against naive scans over random sparse inputs, several dtypes,
// scalars and empty results; Compress on every axis, without axis, a short condition;
// errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(NonZero, SweepAgainstNaive) {
  for (const Shape& shape : {Shape{7}, Shape{3, 4}, Shape{2, 3, 5}}) {
    const Tensor x = random_tensor<int32_t>(shape, 9, -1, 1);
    const Tensor y = run1("NonZero", {x});
    std::vector<std::vector<int64_t>> want(shape.size());
    for_each_index(shape, [&](const Shape& o) {
      if (x.item_as_double(o) != 0) {
        for (size_t d = 0; d < shape.size(); ++d) want[d].push_back(o[d]);
      }
    });
    const int64_t n = static_cast<int64_t>(want[0].size());
    ASSERT_EQ(y.shape(), (Shape{static_cast<int64_t>(shape.size()), n}));
    for (size_t d = 0; d < shape.size(); ++d) {
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(y.item_as_double({static_cast<int64_t>(d), j}), want[d][j]);
    }
  }
  EXPECT_EQ(run1("NonZero", {f32({0, -0.0f, 2, 0}, {2, 2})}).to_int64_vector(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run1("NonZero", {make<bool>({false, true, true}, {3})}).to_int64_vector(),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(run1("NonZero", {f32({0, 0}, {2})}).shape(), (Shape{1, 0}));
  EXPECT_EQ(run1("NonZero", {f32({5}, {})}).shape(), (Shape{1, 1}));
}

TEST(Compress, AxesAndFlatten) {
  const Tensor x = random_tensor<float>({3, 4, 2}, 10);
  for (int axis : {0, 1, 2, -1, -3}) {
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<bool> c(static_cast<size_t>(x.dim(a)), false);
    c[0] = true;
    if (x.dim(a) > 2) c[2] = true;
    std::vector<bool> short_c(c.begin(), c.begin() + std::min<int64_t>(3, x.dim(a)));
    Tensor ct = Tensor::empty(DType::kBool, {static_cast<int64_t>(short_c.size())});
    for (size_t i = 0; i < short_c.size(); ++i) ct.data<bool>()[i] = short_c[i];
    const Tensor y = run1("Compress", {x, ct}, AttrMap().i("axis", axis), 11);
    std::vector<int64_t> kept;
    for (size_t i = 0; i < short_c.size(); ++i) {
      if (short_c[i]) kept.push_back(static_cast<int64_t>(i));
    }
    Shape want = x.shape();
    want[a] = static_cast<int64_t>(kept.size());
    ASSERT_EQ(y.shape(), want);
    for_each_index(want, [&](const Shape& o) {
      std::vector<int64_t> src(o.begin(), o.end());
      src[a] = kept[o[a]];
      ASSERT_EQ(y.item_as_double(o), x.item_as_double(src));
    });
  }
  const Tensor flat = run1(
      "Compress", {f32({1, 2, 3, 4}, {2, 2}), make<bool>({false, true, false, true}, {4})}, {}, 11);
  EXPECT_EQ(flat.to_float_vector(), (std::vector<float>{2, 4}));
}

TEST(Compress, Errors) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  expect_error<ShapeError>(
      [&] {
        run1("Compress", {x, make<bool>({true, true, true}, {3})}, AttrMap().i("axis", 0), 11);
      },
      {"Compress 'test_node'", "condition has 3"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Compress", {x, i64v({1, 0})}, AttrMap().i("axis", 0), 11);
      },
      {"Compress 'test_node'", "int64"});
}

}  // namespace
}  // namespace tern::test
