// Identity and Dropout (inference): views, mask, opset forms, training_mode.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tern::test {
namespace {

Tensor bool_scalar(bool v) {
  Tensor t = Tensor::empty(DType::kBool, {});
  *static_cast<uint8_t*>(t.raw_data()) = v ? 1 : 0;
  return t;
}

TEST(Identity, ReturnsAViewOfAnyDtype) {
  for (DType t : {DType::kFloat32, DType::kInt64, DType::kBool, DType::kFloat16}) {
    const Tensor x = Tensor::zeros(t, {2, 3});
    const Tensor y = run1("Identity", {x});
    EXPECT_EQ(y.raw_data(), x.raw_data());
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
  }
}

TEST(Dropout, InferenceIsIdentityWithAllTrueMask) {
  const Tensor x = f32({1, -2, 3, 4}, {2, 2});
  // Opset 10 (ratio attribute, ignored): the mask is bool (Dropout-10, T1).
  const auto y10 = run_op("Dropout", AttrMap().f("ratio", 0.5f), {x}, 10, 2);
  EXPECT_EQ(y10[0].raw_data(), x.raw_data());
  EXPECT_EQ(y10[1].dtype(), DType::kBool);
  EXPECT_EQ(y10[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(y10[1].to_int64_vector(), (std::vector<int64_t>{1, 1, 1, 1}));
  // Opset 13 with ratio and training_mode = false.
  const auto y13 = run_op("Dropout", {}, {x, Tensor::scalar_f32(0.3f), bool_scalar(false)}, 13, 2);
  EXPECT_EQ(y13[0].to_float_vector(), x.to_float_vector());
  EXPECT_EQ(y13[1].to_int64_vector(), (std::vector<int64_t>{1, 1, 1, 1}));
  // Output only.
  EXPECT_EQ(run1("Dropout", {x}, {}, 12).raw_data(), x.raw_data());
}

TEST(Dropout, MaskHasTheDataDtypeBeforeOpset10) {
  // Dropout-7 declares mask as T, the data's type: all ones of that type.
  const Tensor x = f32({1, -2, 3, 4}, {2, 2});
  for (int opset : {7, 8, 9}) {
    const auto y = run_op("Dropout", AttrMap().f("ratio", 0.5f), {x}, opset, 2);
    EXPECT_EQ(y[0].raw_data(), x.raw_data()) << "opset " << opset;
    EXPECT_EQ(y[1].dtype(), DType::kFloat32) << "opset " << opset;
    EXPECT_EQ(y[1].shape(), (Shape{2, 2}));
    EXPECT_EQ(y[1].to_float_vector(), (std::vector<float>{1, 1, 1, 1})) << "opset " << opset;
  }
  const Tensor h = Tensor::zeros(DType::kFloat16, {3});
  const auto yh = run_op("Dropout", {}, {h}, 7, 2);
  EXPECT_EQ(yh[1].dtype(), DType::kFloat16);
  EXPECT_EQ(yh[1].to_float_vector(), (std::vector<float>{1, 1, 1}));
  // The type inference agrees (the planner allocates from it).
  auto op = make_op("Dropout", {}, 9, 2);
  const std::vector<ops::InferInput> in = {{true, DType::kFloat32, {2, 2}, nullptr}};
  const auto types = op->infer(in);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[1].dtype, DType::kFloat32);
  EXPECT_EQ(make_op("Dropout", {}, 10, 2)->infer(in)[1].dtype, DType::kBool);
}

TEST(Dropout, TrainingModeTrueIsUnsupported) {
  const Tensor x = f32({1, 2}, {2});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Dropout", {x, Tensor(), bool_scalar(true)}, {}, 13);
      },
      {"Dropout 'test_node'", "training_mode", "inference"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Dropout", {x, Tensor(), i64v({1})}, {}, 13);
      },
      {"Dropout 'test_node'", "training_mode", "bool"});
}

}  // namespace
}  // namespace tern::test
