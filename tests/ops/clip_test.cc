// Clip: attribute form (opset < 11), input form (>= 11), defaults, min > max, NaN,
// integer dtypes (>= 12), errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Clip, AttributesBeforeOpset11) {
  const Tensor x = f32({-3.f, -1.f, 0.f, 2.f, 6.f, 9.f}, {2, 3});
  const Tensor y = run1("Clip", {x}, AttrMap().f("min", 0.f).f("max", 6.f), 6);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{0.f, 0.f, 0.f, 2.f, 6.f, 6.f}));
  // Clip-6 defaults are numeric_limits<float>::lowest() / max(): infinities are clipped
  // to the float range, finite values pass.
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  EXPECT_EQ(
      run1("Clip", {f32({-kInf, 1.f, kInf}, {3})}, AttrMap().f("max", 2.f), 6).to_float_vector(),
      (std::vector<float>{kLowest, 1.f, 2.f}));
  EXPECT_EQ(run1("Clip", {f32({-kInf, kInf}, {2})}, {}, 6).to_float_vector(),
            (std::vector<float>{kLowest, kMax}));
  EXPECT_EQ(
      run1("Clip", {f32({-kInf, kLowest, 0.f, kMax, kInf}, {5})}, AttrMap().f("min", -1.f), 10)
          .to_float_vector(),
      (std::vector<float>{-1.f, -1.f, 0.f, kMax, kMax}));
}

TEST(Clip, MissingBoundsFromOpset11AreInfinite) {
  // From opset 11 a missing float bound clips nothing, infinities included.
  EXPECT_EQ(run1("Clip", {f32({-kInf, kInf}, {2})}, {}, 11).to_float_vector(),
            (std::vector<float>{-kInf, kInf}));
  EXPECT_EQ(run1("Clip", {f32({-kInf, 1.f, kInf}, {3}), Tensor(), Tensor::scalar_f32(2.f)}, {}, 13)
                .to_float_vector(),
            (std::vector<float>{-kInf, 1.f, 2.f}));
}

TEST(Clip, InputsFromOpset11) {
  const Tensor x = f32({-3.f, -1.f, 0.5f, 2.f, 7.f}, {5});
  EXPECT_EQ(run1("Clip", {x, Tensor::scalar_f32(-1.f), Tensor::scalar_f32(1.f)}, {}, 11)
                .to_float_vector(),
            (std::vector<float>{-1.f, -1.f, 0.5f, 1.f, 1.f}));
  // Only max (min omitted), only min, neither.
  EXPECT_EQ(run1("Clip", {x, Tensor(), Tensor::scalar_f32(0.f)}, {}, 13).to_float_vector(),
            (std::vector<float>{-3.f, -1.f, 0.f, 0.f, 0.f}));
  EXPECT_EQ(run1("Clip", {x, Tensor::scalar_f32(0.f)}, {}, 13).to_float_vector(),
            (std::vector<float>{0.f, 0.f, 0.5f, 2.f, 7.f}));
  EXPECT_EQ(run1("Clip", {x}, {}, 13).to_float_vector(), x.to_float_vector());
  // A 1-element 1-D bound is accepted as a scalar.
  EXPECT_EQ(run1("Clip", {x, f32({0.f}, {1}), f32({6.f}, {1})}, {}, 13).to_float_vector(),
            (std::vector<float>{0.f, 0.f, 0.5f, 2.f, 6.f}));
}

TEST(Clip, MinAboveMaxGivesMaxAndNaNPasses) {
  const Tensor x = f32({-5.f, 0.f, 5.f, NAN}, {4});
  const std::vector<float> y =
      run1("Clip", {x, Tensor::scalar_f32(2.f), Tensor::scalar_f32(1.f)}, {}, 13).to_float_vector();
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(y[1], 1.f);
  EXPECT_EQ(y[2], 1.f);
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Clip, IntegerDtypesFromOpset12) {
  const int64_t big = int64_t{1} << 60;
  const Tensor y = run1(
      "Clip", {i64({-big, -1, 5, big}, {4}), Tensor::scalar_i64(-1), Tensor::scalar_i64(big - 1)},
      {}, 12);
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.to_int64_vector(), (std::vector<int64_t>{-1, -1, 5, big - 1}));
  EXPECT_EQ(
      run1("Clip", {i32({-9, 3, 9}, {3}), i32({0}, {}), i32({6}, {})}, {}, 13).to_int64_vector(),
      (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(
      run1("Clip",
           {make<uint8_t>({0, 100, 250}, {3}), make<uint8_t>({10}, {}), make<uint8_t>({200}, {})},
           {}, 13)
          .to_int64_vector(),
      (std::vector<int64_t>{10, 100, 200}));
  // No bounds: the type's full range.
  EXPECT_EQ(run1("Clip", {make<int8_t>({-128, 127}, {2})}, {}, 13).to_int64_vector(),
            (std::vector<int64_t>{-128, 127}));
  expect_error<UnsupportedOpError>([] { run1("Clip", {i32({1}, {1})}, {}, 11); },
                                   {"Clip 'test_node'", "float32", "int32"});
}

TEST(Clip, BadBoundsAreErrors) {
  const Tensor x = f32({1.f, 2.f}, {2});
  expect_error<InvalidArgument>(
      [&] {
        run1("Clip", {x, Tensor::scalar_i64(0)}, {}, 13);
      },
      {"Clip 'test_node'", "min", "float32", "int64"});
  expect_error<ShapeError>(
      [&] {
        run1("Clip", {x, Tensor(), f32({1.f, 2.f}, {2})}, {}, 13);
      },
      {"Clip 'test_node'", "max", "scalar", "[2]"});
}

TEST(Clip, StridedInput) {
  const Tensor base = random_tensor<float>({5, 8}, 21);
  const Tensor view = base.slice(1, 0, 8, 2).transpose(0, 1);
  const std::vector<float> got =
      run1("Clip", {view, Tensor::scalar_f32(-1.f), Tensor::scalar_f32(1.f)}, {}, 13)
          .to_float_vector();
  const std::vector<float> src = view.to_float_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::clamp(src[i], -1.f, 1.f));
}

}  // namespace
}  // namespace tern::test
