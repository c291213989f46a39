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
  // Opset 7 (ratio attribute, ignored).
  const auto y7 = run_op("Dropout", AttrMap().f("ratio", 0.5f), {x}, 7, 2);
  EXPECT_EQ(y7[0].raw_data(), x.raw_data());
  EXPECT_EQ(y7[1].dtype(), DType::kBool);
  EXPECT_EQ(y7[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(y7[1].to_int64_vector(), (std::vector<int64_t>{1, 1, 1, 1}));
  // Opset 13 with ratio and training_mode = false.
  const auto y13 = run_op("Dropout", {}, {x, Tensor::scalar_f32(0.3f), bool_scalar(false)}, 13, 2);
  EXPECT_EQ(y13[0].to_float_vector(), x.to_float_vector());
  EXPECT_EQ(y13[1].to_int64_vector(), (std::vector<int64_t>{1, 1, 1, 1}));
  // Output only.
  EXPECT_EQ(run1("Dropout", {x}, {}, 12).raw_data(), x.raw_data());
}

TEST(Dropout, TrainingModeTrueIsUnsupported) {
  const Tensor x = f32({1, 2}, {2});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Dropout", {x, Tensor(), bool_scalar(true)}, {}, 13);
      },
      {"Dropout 'test_node'", "training_mode", "inference"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Dropout", {x, Tensor(), i64v({1})}, {}, 13);
      },
      {"Dropout 'test_node'", "training_mode", "bool"});
}

}  // namespace
}  // namespace tern::test
