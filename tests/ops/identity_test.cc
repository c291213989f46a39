// Identity and Dropout (inference): views, mask, opset forms, training_mode.
#include <gtest/gtest.h>

#include <random>
#include <vector>

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

// numpy's np.random.seed(seed); np.random.uniform(0, 1, n), written out: MT19937
// init_genrand, two 32-bit draws per double.
std::vector<double> numpy_uniform(uint32_t seed, int64_t n) {
  std::mt19937 gen(seed);
  std::vector<double> u;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = gen(), b = gen();
    u.push_back(((a >> 5) * 67108864.0 + (b >> 6)) / 9007199254740992.0);
  }
  return u;
}

TEST(Dropout, NumpySeedZeroFirstDraws) {
  // np.random.seed(0); np.random.uniform(0, 1, 3) = 0.5488135039273248, 0.7151893663724195,
  // 0.6027633760716439 (numpy's documented legacy stream).
  const auto u = numpy_uniform(0, 3);
  EXPECT_DOUBLE_EQ(u[0], 0.5488135039273248);
  EXPECT_DOUBLE_EQ(u[1], 0.7151893663724195);
  EXPECT_DOUBLE_EQ(u[2], 0.6027633760716439);
}

TEST(Dropout, TrainingModeDrawsTheNumpyMask) {
  const Tensor x = random_tensor<float>({3, 7}, 5);
  for (int64_t seed : {0, 1, 123}) {
    for (float ratio : {0.1f, 0.5f, 0.75f}) {
      AttrMap attrs;
      if (seed != 0) attrs.i("seed", seed);
      const auto out = run_op("Dropout", attrs, {x, f32({ratio}, {}), bool_scalar(true)}, 13, 2);
      const auto u = numpy_uniform(static_cast<uint32_t>(seed), x.numel());
      const auto xv = x.to_float_vector(), yv = out[0].to_float_vector();
      const Tensor mask = out[1];
      ASSERT_EQ(mask.dtype(), DType::kBool);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = u[i] >= ratio;
        EXPECT_EQ(static_cast<const uint8_t*>(mask.raw_data())[i] != 0, keep) << i;
        EXPECT_NEAR(yv[i], keep ? xv[i] / (1.0 - ratio) : 0.0, 1e-6) << i;
      }
    }
  }
  // ratio 0 and training_mode false are the identity with an all-true mask.
  for (const auto& in : {std::vector<Tensor>{x, f32({0.0f}, {}), bool_scalar(true)},
                         std::vector<Tensor>{x, f32({0.5f}, {}), bool_scalar(false)}}) {
    const auto out = run_op("Dropout", {}, in, 13, 2);
    EXPECT_EQ(out[0].to_float_vector(), x.to_float_vector());
    for (int64_t i = 0; i < x.numel(); ++i)
      EXPECT_TRUE(static_cast<const uint8_t*>(out[1].raw_data())[i] != 0);
  }
}

TEST(Dropout, TrainingModeErrors) {
  const Tensor x = f32({1, 2}, {2});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Dropout", {x, Tensor(), i64v({1})}, {}, 13);
      },
      {"Dropout 'test_node'", "training_mode", "bool"});
  expect_error<InvalidArgument>(
      [&] {
        run1("Dropout", {x, f32({1.0f}, {}), bool_scalar(true)}, {}, 13);
      },
      {"Dropout 'test_node'", "ratio"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Dropout", {i32({1, 2}, {2}), Tensor(), bool_scalar(true)}, {}, 13);
      },
      {"Dropout 'test_node'", "int32"});
}

}  // namespace
}  // namespace tern::test
