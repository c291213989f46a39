// Cast: every pair of dtypes, truncation toward zero, saturation, NaN, bool, float16 and
// bfloat16 rounding, integer wrapping, unsupported targets.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/float16.h"
#include "base/onnx_dtype.h"
#include "ops/op_test_util.h"

namespace tern::test {
namespace {

Tensor cast(const Tensor& x, DType to) {
  return run1("Cast", {x}, AttrMap().i("to", onnx_dtype_code(to)));
}

constexpr DType kAll[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                          DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
                          DType::kUint8,   DType::kUint16,  DType::kUint32,   DType::kUint64,
                          DType::kBool};

// Small non-negative integers are exact in every dtype: a cast between any two dtypes
// keeps them (bool keeps 0 and 1).
TEST(Cast, EveryPairKeepsSmallValues) {
  const std::vector<float> values = {0, 1, 2, 7, 100, 0, 1};
  for (DType from : kAll) {
    const std::vector<float> src =
        from == DType::kBool ? std::vector<float>{0, 1, 1, 0, 1, 0, 1} : values;
    const Tensor x = cast(f32(src, {7}), from);
    ASSERT_EQ(x.dtype(), from);
    for (DType to : kAll) {
      const Tensor y = cast(x, to);
      ASSERT_EQ(y.dtype(), to);
      ASSERT_EQ(y.shape(), (Shape{7}));
      const std::vector<float> got = y.to_float_vector();
      for (size_t i = 0; i < src.size(); ++i) {
        const float want = to == DType::kBool ? (src[i] != 0 ? 1.f : 0.f) : src[i];
        EXPECT_EQ(got[i], want) << dtype_name(from) << " -> " << dtype_name(to) << " [" << i << "]";
      }
    }
  }
}

TEST(Cast, FloatToIntTruncatesTowardZeroAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = f32({2.9f, -2.9f, 0.5f, -0.5f, 1e10f, -1e10f, nan, inf, -inf}, {9});
  EXPECT_EQ(
      cast(x, DType::kInt32).to_int64_vector(),
      (std::vector<int64_t>{
          2, -2, 0, 0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0,
          std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(cast(x, DType::kInt64).to_int64_vector(),
            (std::vector<int64_t>{2, -2, 0, 0, 10000000000LL, -10000000000LL, 0,
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(cast(x, DType::kInt8).to_int64_vector(),
            (std::vector<int64_t>{2, -2, 0, 0, 127, -128, 0, 127, -128}));
  EXPECT_EQ(cast(x, DType::kUint8).to_int64_vector(),
            (std::vector<int64_t>{2, 0, 0, 0, 255, 0, 0, 255, 0}));
  // Values just inside the int8 range.
  EXPECT_EQ(cast(f32({127.9f, -128.9f, 255.5f}, {3}), DType::kInt8).to_int64_vector(),
            (std::vector<int64_t>{127, -128, 127}));
  EXPECT_EQ(cast(f32({255.9f, -0.9f}, {2}), DType::kUint8).to_int64_vector(),
            (std::vector<int64_t>{255, 0}));
}

TEST(Cast, IntegersWrapAndConvertExactly) {
  const int64_t big = (int64_t{1} << 40) + 5;
  const Tensor x = i64({big, -1, 300, -129}, {4});
  // int64 -> int32 / int8 / uint8 keep the low bits (two's complement).
  EXPECT_EQ(cast(x, DType::kInt32).to_int64_vector(), (std::vector<int64_t>{5, -1, 300, -129}));
  EXPECT_EQ(cast(x, DType::kInt8).to_int64_vector(), (std::vector<int64_t>{5, -1, 44, 127}));
  EXPECT_EQ(cast(x, DType::kUint8).to_int64_vector(), (std::vector<int64_t>{5, 255, 44, 127}));
  // int64 -> float32 rounds to nearest; int32 -> int64 is exact.
  EXPECT_EQ(cast(i64({(int64_t{1} << 24) + 1}, {1}), DType::kFloat32).to_float_vector(),
            (std::vector<float>{16777216.f}));
  EXPECT_EQ(cast(i32({-2147483647 - 1}, {1}), DType::kInt64).to_int64_vector(),
            (std::vector<int64_t>{-2147483648LL}));
}

TEST(Cast, BoolAndNaN) {
  const Tensor b = cast(f32({0.f, -0.f, 0.1f, -3.f, NAN}, {5}), DType::kBool);
  EXPECT_EQ(b.to_int64_vector(), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  // Stored bytes are exactly 0 or 1.
  const auto* bytes = static_cast<const uint8_t*>(b.raw_data());
  for (int i = 0; i < 5; ++i) EXPECT_LE(bytes[i], 1);
  EXPECT_EQ(cast(i64({0, 5, -5}, {3}), DType::kBool).to_int64_vector(),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(cast(cast(i64({0, 5}, {2}), DType::kBool), DType::kFloat32).to_float_vector(),
            (std::vector<float>{0.f, 1.f}));
}

TEST(Cast, Float16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even (1 + 2^-9).
  const float h1 = 1.f + std::ldexp(1.f, -11);
  const float h3 = 1.f + 3.f * std::ldexp(1.f, -11);
  const Tensor y = cast(f32({h1, h3, 65504.f, 65520.f, -1e9f, 1e-8f}, {6}), DType::kFloat16);
  const auto* bits = reinterpret_cast<const uint16_t*>(y.data<Float16>());
  EXPECT_EQ(bits[0], 0x3C00);
  EXPECT_EQ(bits[1], 0x3C02);
  EXPECT_EQ(bits[2], 0x7BFF);  // largest half
  EXPECT_EQ(bits[3], 0x7C00);  // rounds to inf
  EXPECT_EQ(bits[4], 0xFC00);  // -inf
  EXPECT_EQ(bits[5], 0x0000);  // below half the smallest subnormal: 0
  // float16 -> int truncates through float; -> float is exact.
  EXPECT_EQ(cast(y, DType::kInt32).to_int64_vector()[2], 65504);
  EXPECT_EQ(cast(cast(f32({-2.75f}, {1}), DType::kFloat16), DType::kInt8).to_int64_vector(),
            (std::vector<int64_t>{-2}));
}

TEST(Cast, BFloat16RoundsToNearestEven) {
  // bfloat16 keeps 8 mantissa bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (ties to
  // even: 1.0); 1 + 3 * 2^-8 ties to 1 + 2^-6; just above a tie rounds up.
  const float t1 = 1.f + std::ldexp(1.f, -8);
  const float t3 = 1.f + 3.f * std::ldexp(1.f, -8);
  const float above = 1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor y = cast(f32({t1, t3, above, -2.f, nan, 3.4e38f}, {6}), DType::kBFloat16);
  const auto* bits = reinterpret_cast<const uint16_t*>(y.data<BFloat16>());
  EXPECT_EQ(bits[0], 0x3F80);
  EXPECT_EQ(bits[1], 0x3F82);
  EXPECT_EQ(bits[2], 0x3F81);
  EXPECT_EQ(bits[3], 0xC000);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(bits[4])));
  EXPECT_EQ(bits[5], 0x7F80);  // 3.4e38 rounds past the largest bfloat16: inf
  EXPECT_EQ(cast(y, DType::kFloat32).to_float_vector()[3], -2.f);
}

TEST(Cast, StridedInputAndThreads) {
  const Tensor base = random_tensor<float>({300, 400}, 17, -100, 100);
  const Tensor view = base.transpose(0, 1);
  const Tensor y = run1("Cast", {view}, AttrMap().i("to", 7), 13, 4);
  const std::vector<float> src = view.to_float_vector();
  const std::vector<int64_t> got = y.to_int64_vector();
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], static_cast<int64_t>(std::trunc(src[i])));
}

TEST(Cast, UnsupportedAndInvalidTargets) {
  const Tensor x = f32({1}, {1});
  expect_error<UnsupportedOpError>([&] { run1("Cast", {x}, AttrMap().i("to", 14)); },
                                   {"Cast 'test_node'", "14", "complex"});
  expect_error<ModelError>([&] { run1("Cast", {x}, AttrMap().i("to", 99)); },
                           {"Cast 'test_node'", "99"});
  expect_error<ModelError>([&] { run1("Cast", {x}); }, {"Cast 'test_node'", "to"});
}

TEST(CastLike, TakesTheDtypeOfTheSecondInputWithCastRules) {
  // Every target dtype: the output has target_type's dtype and input's shape, and equals
  // Cast to that dtype (including strided input and a target of another shape).
  const Tensor x = f32({-2.7f, 0.f, 1.5f, 3.25f, 100.f, -0.5f}, {2, 3}).transpose(0, 1);
  for (DType to : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                   DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUint8,
                   DType::kUint16, DType::kUint32, DType::kUint64, DType::kBool}) {
    const Tensor like = Tensor::zeros(to, {5});
    const Tensor y = run1("CastLike", {x, like}, {}, 15);
    ASSERT_EQ(y.dtype(), to) << dtype_name(to);
    ASSERT_EQ(y.shape(), x.shape());
    const Tensor want = run1("Cast", {x}, AttrMap().i("to", onnx_dtype_code(to)));
    for_each_index(y.shape(), [&](const Shape& idx) {
      ASSERT_EQ(y.item_as_double(idx), want.item_as_double(idx)) << dtype_name(to);
    });
  }
  // float64 -> float16 rounds to nearest even: 1 + 2^-11 is a tie and goes to 1.
  const Tensor h = run1("CastLike",
                        {make<double>({1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048}, {2}),
                         Tensor::zeros(DType::kFloat16, {1})},
                        {}, 15);
  EXPECT_EQ(h.item_as_double({0}), 1.0);
  EXPECT_EQ(h.item_as_double({1}), 1.001953125);
}

TEST(CastLike, StringTargetAndSource) {
  // To a string target and back: the same conversions as Cast to = 8 / from string.
  const Tensor x = f32({1.5f, -2.f, 0.1f}, {3});
  const Tensor like_str = Tensor::empty(DType::kString, {1});
  const Tensor s = run1("CastLike", {x, like_str}, {}, 15);
  ASSERT_EQ(s.dtype(), DType::kString);
  const Tensor want = run1("Cast", {x}, AttrMap().i("to", 8));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(s.data<std::string>()[i], want.data<std::string>()[i]);
  const Tensor back = run1("CastLike", {s, Tensor::zeros(DType::kFloat32, {2})}, {}, 15);
  EXPECT_EQ(back.to_float_vector(), x.to_float_vector());
}

}  // namespace
}  // namespace tern::test
