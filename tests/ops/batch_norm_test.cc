// BatchNormalization op (src/ops/batch_norm.cc): inference values, opset variants and the
// rejected training paths.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

std::vector<Tensor> onnx_example_inputs() {
  // The ONNX backend test "batchnorm_example" inputs.
  return {Tensor::from_vector({-1, 0, 1, 2, 3, 4}, {1, 2, 1, 3}),
          Tensor::from_vector({1.0f, 1.5f}, {2}), Tensor::from_vector({0, 1}, {2}),
          Tensor::from_vector({0, 3}, {2}), Tensor::from_vector({1, 1.5f}, {2})};
}

TEST(BatchNormOp, OnnxExampleEveryOpset) {
  const std::vector<float> expected = {-0.999995f, 0, 0.999995f, -0.22474074f, 1, 2.2247407f};
  for (int opset : {7, 9, 14, 15}) {
    const Tensor y = run_op("BatchNormalization", AttrMap(), onnx_example_inputs(), opset)[0];
    EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 3}));
    test::expect_near_all(y.to_float_vector(), expected, 1e-6f, 1e-6f);
  }
}

TEST(BatchNormOp, EpsilonAttribute) {
  // var 0 and epsilon 0.25: (x - mean) / 0.5.
  const std::vector<Tensor> in = {Tensor::from_vector({1, 2, 3}, {1, 1, 3}),
                                  Tensor::from_vector({1}, {1}), Tensor::from_vector({0}, {1}),
                                  Tensor::from_vector({2}, {1}), Tensor::from_vector({0}, {1})};
  const Tensor y = run_op("BatchNormalization", AttrMap().f("epsilon", 0.25f), in)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{-2, 0, 2}));
}

TEST(BatchNormOp, SpatialZeroOpset7IsPerActivation) {
  // X [2, 2, 2] with statistics of shape [2, 2] (one per channel and position).
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  const Tensor scale = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  const Tensor bias = Tensor::from_vector({0, 0, 1, 1}, {2, 2});
  const Tensor mean = Tensor::from_vector({1, 1, 1, 1}, {2, 2});
  const Tensor var = Tensor::from_vector({1, 1, 1, 1}, {2, 2});
  const Tensor y = run_op("BatchNormalization", AttrMap().i("spatial", 0).f("epsilon", 0),
                          {x, scale, bias, mean, var}, 7)[0];
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{0, 2, 7, 13, 4, 10, 19, 29}));
  // In opset 9+ the attribute no longer exists: per-channel statistics are required.
  expect_error<ShapeError>(
      [&] {
        run_op("BatchNormalization", AttrMap().i("spatial", 0), {x, scale, bias, mean, var}, 9);
      },
      {"expected scale of shape [2] (C = 2), but got [2, 2]"});
}

TEST(BatchNormOp, TrainingModeUsesBatchStatisticsAndUpdatesRunningStats) {
  // X [3, 2, 5] random; reference: per-channel mean and biased variance over N and W.
  const Tensor x = test::random_tensor<float>({3, 2, 5}, 17);
  const Tensor scale = test::f32({1.5f, -0.5f}, {2}), bias = test::f32({0.25f, 2.0f}, {2});
  const Tensor mean = test::f32({0.1f, -0.2f}, {2}), var = test::f32({1.0f, 3.0f}, {2});
  for (float momentum : {0.9f, 0.25f}) {
    const auto out =
        run_op("BatchNormalization",
               AttrMap().i("training_mode", 1).f("momentum", momentum).f("epsilon", 1e-2f),
               {x, scale, bias, mean, var}, 15, 3);
    const auto xv = x.to_float_vector();
    for (int c = 0; c < 2; ++c) {
      double m = 0, v = 0;
      for (int n = 0; n < 3; ++n)
        for (int i = 0; i < 5; ++i) m += xv[(n * 2 + c) * 5 + i];
      m /= 15;
      for (int n = 0; n < 3; ++n)
        for (int i = 0; i < 5; ++i)
          v += (xv[(n * 2 + c) * 5 + i] - m) * (xv[(n * 2 + c) * 5 + i] - m);
      v /= 15;
      for (int n = 0; n < 3; ++n) {
        for (int i = 0; i < 5; ++i) {
          const int k = (n * 2 + c) * 5 + i;
          EXPECT_NEAR(out[0].to_float_vector()[k],
                      (xv[k] - m) / std::sqrt(v + 1e-2) * scale.to_float_vector()[c] +
                          bias.to_float_vector()[c],
                      1e-5);
        }
      }
      EXPECT_NEAR(out[1].to_float_vector()[c],
                  mean.to_float_vector()[c] * momentum + m * (1 - momentum), 1e-6);
      EXPECT_NEAR(out[2].to_float_vector()[c],
                  var.to_float_vector()[c] * momentum + v * (1 - momentum), 1e-5);
    }
  }
  // Training mode without the optional outputs gives Y alone, the same values.
  const Tensor y1 = run_op("BatchNormalization", AttrMap().i("training_mode", 1),
                           {x, scale, bias, mean, var}, 15)[0];
  const Tensor y3 = run_op("BatchNormalization", AttrMap().i("training_mode", 1),
                           {x, scale, bias, mean, var}, 15, 3)[0];
  EXPECT_EQ(y1.to_float_vector(), y3.to_float_vector());
}

TEST(BatchNormOp, TrainingOutputsNeedTrainingMode) {
  // Declared outputs 1.. without training_mode = 1 (or before opset 14) fail at creation.
  for (int opset : {7, 9, 14, 15}) {
    for (int outputs : {2, 3, 5}) {
      expect_error<UnsupportedOpError>(
          [&] { test::make_op("BatchNormalization", AttrMap(), opset, outputs); },
          {"BatchNormalization 'test_node'", "declares " + std::to_string(outputs) + " outputs",
           "output 1 (a training output", "training_mode = 1"});
    }
    EXPECT_NO_THROW(test::make_op("BatchNormalization", AttrMap(), opset, 1));
  }
  expect_error<UnsupportedOpError>(
      [&] { test::make_op("BatchNormalization", AttrMap().i("training_mode", 1), 15, 5); },
      {"BatchNormalization 'test_node'", "declares 5 outputs"});
  expect_error<ModelError>(
      [&] { test::make_op("BatchNormalization", AttrMap().i("training_mode", 2), 15); },
      {"BatchNormalization 'test_node'", "training_mode"});
}

TEST(BatchNormOp, ErrorsKeepTheirTypes) {
  // A dtype the op does not implement is UnsupportedOpError naming the input.
  std::vector<Tensor> in = onnx_example_inputs();
  in[3] = Tensor::zeros(DType::kFloat16, in[3].shape());
  expect_error<UnsupportedOpError>(
      [&] { run_op("BatchNormalization", AttrMap(), in); },
      {"BatchNormalization 'test_node': input 3 (input_mean) dtype float16 is not supported "
       "(supported: float32)"});
}

TEST(BatchNormOp, Errors) {
  std::vector<Tensor> in = onnx_example_inputs();
  in[4] = Tensor::from_vector({1, 1, 1}, {3});
  expect_error<ShapeError>(
      [&] { run_op("BatchNormalization", AttrMap(), in); },
      {"BatchNormalization 'test_node': expected input_var of shape [2] (C = 2), "
       "but got [3]"});
  in = onnx_example_inputs();
  in[0] = Tensor::from_vector({1, 2}, {2});
  expect_error<ShapeError>([&] { run_op("BatchNormalization", AttrMap(), in); },
                           {"expected input X of rank >= 2"});
  expect_error<ModelError>(
      [&] {
        run_op("BatchNormalization", AttrMap().i("training_mode", 3), onnx_example_inputs(), 15);
      },
      {"'training_mode' must be 0 or 1"});
}

}  // namespace
}  // namespace tern
