// Pad op (src/ops/pad.cc): attribute form (opset < 11) and input form (opset >= 11),
// constant / reflect / edge against numpy.pad values (computed offline), negative pads,
// and errors.
#include <gtest/gtest.h>

#include <vector>

#include "base/onnx_dtype.h"
#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

const Tensor kX = Tensor::from_vector({1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, {3, 2});

Tensor pads(const std::vector<int64_t>& p) {
  return Tensor::from_vector_i64(p, {static_cast<int64_t>(p.size())});
}

TEST(PadOp, OnnxExamplesReflectEdge) {
  // pads [0, 2, 0, 0]: two columns before each row.
  Tensor y = run_op("Pad", AttrMap().s("mode", "reflect"), {kX, pads({0, 2, 0, 0})}, 11)[0];
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f,
                                                     4.5f, 5.7f, 4.5f, 5.7f}));
  y = run_op("Pad", AttrMap().s("mode", "edge"), {kX, pads({0, 2, 0, 0})}, 13)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f,
                                                     4.5f, 4.5f, 4.5f, 5.7f}));
}

TEST(PadOp, ConstantValueInputAndAttribute) {
  const Tensor x = Tensor::from_vector({1, 2}, {1, 2});
  Tensor y = run_op("Pad", AttrMap(), {x, pads({1, 0, 0, 1}), Tensor::scalar_f32(7)}, 11)[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{7, 7, 7, 1, 2, 7}));
  y = run_op("Pad", AttrMap(), {x, pads({1, 0, 0, 1})}, 13)[0];  // default 0
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{0, 0, 0, 1, 2, 0}));
  // opset 2: pads and value attributes.
  y = run_op("Pad", AttrMap().ints("pads", {1, 0, 0, 1}).f("value", -1), {x}, 2)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{-1, -1, -1, 1, 2, -1}));
}

TEST(PadOp, NumpyReflectEdgeConstant2d) {
  // x = arange(12).reshape(3, 4), numpy pads ((1, 2), (2, 1)) -> ONNX [1, 2, 2, 1].
  const Tensor x = test::iota_tensor({3, 4});
  const Tensor p = pads({1, 2, 2, 1});
  EXPECT_EQ(
      run_op("Pad", AttrMap().s("mode", "reflect"), {x, p}, 13)[0].to_float_vector(),
      (std::vector<float>{6,  5, 4, 5, 6,  7,  6,  2, 1, 0, 1, 2, 3, 2, 6, 5, 4, 5, 6, 7, 6,
                          10, 9, 8, 9, 10, 11, 10, 6, 5, 4, 5, 6, 7, 6, 2, 1, 0, 1, 2, 3, 2}));
  EXPECT_EQ(
      run_op("Pad", AttrMap().s("mode", "edge"), {x, p}, 13, 1, 2)[0].to_float_vector(),
      (std::vector<float>{0, 0, 0, 1, 2,  3,  3,  0, 0, 0, 1, 2,  3,  3,  4, 4, 4, 5, 6,  7,  7,
                          8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 9, 10, 11, 11}));
}

TEST(PadOp, NegativePadsCrop) {
  // numpy.pad(x[1:, :3], ((0, 1), (2, 0)), 'reflect'): ONNX pads [-1, 2, 1, -1].
  const Tensor x = test::iota_tensor({3, 4});
  Tensor y = run_op("Pad", AttrMap().s("mode", "reflect"), {x, pads({-1, 2, 1, -1})}, 13)[0];
  EXPECT_EQ(y.shape(), (Shape{3, 5}));
  EXPECT_EQ(y.to_float_vector(),
            (std::vector<float>{6, 5, 4, 5, 6, 10, 9, 8, 9, 10, 6, 5, 4, 5, 6}));
  // Pure crop of a 4-D NCHW tensor.
  const Tensor img = test::iota_tensor({1, 2, 3, 3});
  y = run_op("Pad", AttrMap(), {img, pads({0, -1, 0, -1, 0, 0, -1, 0})}, 13)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{10, 11, 13, 14}));
}

TEST(PadOp, PadsNotKnownAtPlanTime) {
  auto op = test::make_op("Pad", AttrMap(), 13);
  std::vector<ops::InferInput> in(2);
  in[0] = {true, DType::kFloat32, {3, 2}, nullptr};
  in[1] = {true, DType::kInt64, {4}, nullptr};
  EXPECT_THROW(op->infer(in), ops::ValueNotKnown);
}

TEST(PadOp, EveryDtypeMatchesFloatPadding) {
  // The same padding on integer-valued data of each dtype gives the float result.
  const Tensor xf =
      Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {3, 5});
  const Tensor p = pads({1, 2, 2, 3});
  for (const char* mode : {"constant", "reflect", "edge"}) {
    const std::vector<float> want =
        run_op("Pad", AttrMap().s("mode", mode), {xf, p}, 13)[0].to_float_vector();
    for (DType dt : {DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64,
                     DType::kFloat64, DType::kInt16, DType::kUint16, DType::kUint32, DType::kUint64,
                     DType::kBFloat16}) {
      const Tensor x = run_op("Cast", AttrMap().i("to", onnx_dtype_code(dt)), {xf}, 13)[0];
      const Tensor y = run_op("Pad", AttrMap().s("mode", mode), {x, p}, 13)[0];
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(y.to_float_vector(), want) << mode << " " << dtype_name(dt);
    }
  }
  // constant_value of the data's dtype, and Pad-2's float value cast to int32.
  const Tensor xi = test::i32({1, 2, 3}, {3});
  EXPECT_EQ(
      run_op("Pad", AttrMap(), {xi, pads({1, 1}), test::i32({-7}, {})}, 13)[0].to_int64_vector(),
      (std::vector<int64_t>{-7, 1, 2, 3, -7}));
  EXPECT_EQ(
      run_op("Pad", AttrMap().ints("pads", {0, 2}).f("value", 9.0f), {xi}, 2)[0].to_int64_vector(),
      (std::vector<int64_t>{1, 2, 3, 9, 9}));
}

TEST(PadOp, Errors) {
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", AttrMap(), {kX, pads({1, 1})}, 13);
      },
      {"Pad 'test_node': expected pads with 4 values (begin and end for each of "
       "the 2 dims of [3, 2]), but got 2"});
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", AttrMap(), {kX, pads({-2, 0, -2, 0})}, 13);
      },
      {"crop more than the 3 elements of dim 0"});
  expect_error<ShapeError>(
      [&] {
        run_op("Pad", AttrMap().s("mode", "edge"), {kX, pads({0, -2, 0, 1})}, 13);
      },
      {"edge padding of dim 1 needs at least one input element"});
  expect_error<ModelError>(
      [&] {
        run_op("Pad", AttrMap().s("mode", "wrap"), {kX, pads({0, 0, 0, 0})}, 13);
      },
      {"attribute 'mode' is 'wrap', expected one of"});
  expect_error<ModelError>([&] { run_op("Pad", AttrMap(), {kX}, 2); },
                           {"required attribute 'pads' (INTS) is missing"});
  expect_error<UnsupportedOpError>(
      [&] {
        run_op("Pad", AttrMap(), {kX, Tensor::from_vector({0, 0, 0, 0}, {4})}, 13);
      },
      {"input 1 (pads) dtype float32 is not supported (supported: int64)"});
  // constant_value must have the data's dtype (the spec ties both to T): a mismatch.
  expect_error<InvalidArgument>(
      [&] {
        run_op("Pad", AttrMap(), {kX, pads({0, 0, 0, 0}), Tensor::scalar_i64(1)}, 13);
      },
      {"Pad 'test_node': input 2 (constant_value) must have the dtype of input 0 (data), "
       "float32, but got int64"});
}

}  // namespace
}  // namespace tern
