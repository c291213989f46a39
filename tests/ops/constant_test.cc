// Constant (every value attribute, view semantics, unsupported and invalid attributes)
// and ConstantOfShape (default value, typed values, scalar and empty shapes, errors).
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

TEST(Constant, ValueTensorIsReturnedAsView) {
  const Tensor v = f32({1, 2, 3, 4}, {2, 2});
  const Tensor y = run1("Constant", {}, AttrMap().tensor("value", v));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(y.raw_data(), v.raw_data());
  const Tensor b = run1("Constant", {}, AttrMap().tensor("value", make<uint8_t>({1, 0}, {2})));
  EXPECT_EQ(b.dtype(), DType::kUint8);
}

TEST(Constant, ScalarAndListAttributesFromOpset12) {
  const Tensor f = run1("Constant", {}, AttrMap().f("value_float", 2.5f), 12);
  EXPECT_EQ(f.shape(), Shape{});
  EXPECT_EQ(f.to_float_vector(), (std::vector<float>{2.5f}));
  const Tensor fs = run1("Constant", {}, AttrMap().floats("value_floats", {1.f, -1.f}), 13);
  EXPECT_EQ(fs.shape(), (Shape{2}));
  EXPECT_EQ(fs.to_float_vector(), (std::vector<float>{1.f, -1.f}));
  const int64_t big = (int64_t{1} << 62) + 1;
  const Tensor i = run1("Constant", {}, AttrMap().i("value_int", big), 13);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.shape(), Shape{});
  EXPECT_EQ(i.to_int64_vector(), (std::vector<int64_t>{big}));
  const Tensor is = run1("Constant", {}, AttrMap().ints("value_ints", {3, -1, big}), 13);
  EXPECT_EQ(is.shape(), (Shape{3}));
  EXPECT_EQ(is.to_int64_vector(), (std::vector<int64_t>{3, -1, big}));
}

TEST(Constant, Errors) {
  expect_error<ModelError>([] { run1("Constant", {}); }, {"Constant 'test_node'", "exactly one"});
  expect_error<ModelError>(
      [] { run1("Constant", {}, AttrMap().f("value_float", 1.f).i("value_int", 1)); },
      {"Constant 'test_node'", "got 2"});
  expect_error<UnsupportedOpError>([] { run1("Constant", {}, AttrMap().s("value_string", "x")); },
                                   {"Constant 'test_node'", "value_string"});
  expect_error<ModelError>([] { run1("Constant", {}, AttrMap().i("value", 3)); },
                           {"Constant 'test_node'", "value", "TENSOR"});
}

TEST(ConstantOfShape, DefaultFloatZeroAndTypedValues) {
  const Tensor z = run1("ConstantOfShape", {i64v({2, 3})}, {}, 9);
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.to_float_vector(), std::vector<float>(6, 0.f));
  const Tensor one =
      run1("ConstantOfShape", {i64v({4})}, AttrMap().tensor("value", i64({int64_t{1} << 50}, {1})));
  EXPECT_EQ(one.dtype(), DType::kInt64);
  EXPECT_EQ(one.to_int64_vector(), std::vector<int64_t>(4, int64_t{1} << 50));
  const Tensor h = run1("ConstantOfShape", {i64v({3})},
                        AttrMap().tensor("value", make<Float16>({Float16{0x3C00}}, {1})));
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.to_float_vector(), std::vector<float>(3, 1.f));
  // An empty shape tensor gives a scalar; a 0 dim gives an empty tensor.
  const Tensor s = run1("ConstantOfShape", {i64v({})}, AttrMap().tensor("value", f32({7.f}, {1})));
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.to_float_vector(), (std::vector<float>{7.f}));
  EXPECT_EQ(run1("ConstantOfShape", {i64v({2, 0})}).shape(), (Shape{2, 0}));
}

TEST(ConstantOfShape, Errors) {
  expect_error<ShapeError>(
      [] {
        run1("ConstantOfShape", {i64v({2, -1})});
      },
      {"ConstantOfShape 'test_node'", "negative"});
  expect_error<UnsupportedOpError>([] { run1("ConstantOfShape", {i32({2}, {1})}); },
                                   {"ConstantOfShape 'test_node'", "int64", "int32"});
  expect_error<ModelError>(
      [] {
        run1("ConstantOfShape", {i64v({2})}, AttrMap().tensor("value", f32({1, 2}, {2})));
      },
      {"ConstantOfShape 'test_node'", "one element"});
}

}  // namespace
}  // namespace tern::test
