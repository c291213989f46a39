// Gemm op (src/ops/gemm.cc): transposes, alpha / beta, every broadcast form of C, macs
// and errors.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

// A = [[1 2 3], [4 5 6]], B = [[7 8], [9 10], [11 12]]: AB = [[58 64], [139 154]].
const Tensor kA = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
const Tensor kB = Tensor::from_vector({7, 8, 9, 10, 11, 12}, {3, 2});

TEST(GemmOp, TransposesAndNoC) {
  const Tensor at = kA.transpose(0, 1).contiguous(), bt = kB.transpose(0, 1).contiguous();
  EXPECT_EQ(run_op("Gemm", AttrMap(), {kA, kB})[0].to_float_vector(),
            (std::vector<float>{58, 64, 139, 154}));
  EXPECT_EQ(run_op("Gemm", AttrMap().i("transA", 1).i("transB", 1), {at, bt})[0].to_float_vector(),
            (std::vector<float>{58, 64, 139, 154}));
  // A view (non-contiguous) is accepted as well.
  EXPECT_EQ(run_op("Gemm", AttrMap().i("transB", 1), {kA, kB.transpose(0, 1)})[0].to_float_vector(),
            (std::vector<float>{58, 64, 139, 154}));
  // C may be omitted explicitly (opset 11+).
  EXPECT_EQ(run_op("Gemm", AttrMap(), {kA, kB, Tensor()}, 11)[0].to_float_vector(),
            (std::vector<float>{58, 64, 139, 154}));
}

TEST(GemmOp, AlphaBetaAndBroadcastC) {
  const AttrMap ab = AttrMap().f("alpha", 0.5f).f("beta", 2.0f);
  struct Case {
    Tensor c;
    std::vector<float> expected;  // 0.5 * AB + 2 * C
  };
  const std::vector<Case> cases = {
      {Tensor::scalar_f32(1), {31, 34, 71.5f, 79}},
      {Tensor::from_vector({1}, {1}), {31, 34, 71.5f, 79}},
      {Tensor::from_vector({1, 2}, {2}), {31, 36, 71.5f, 81}},
      {Tensor::from_vector({1, 2}, {1, 2}), {31, 36, 71.5f, 81}},
      {Tensor::from_vector({1, 2}, {2, 1}), {31, 34, 73.5f, 81}},
      {Tensor::from_vector({1, 2, 3, 4}, {2, 2}), {31, 36, 75.5f, 85}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(run_op("Gemm", ab, {kA, kB, c.c})[0].to_float_vector(), c.expected)
        << shape_str(c.c.shape());
  }
  // beta = 0 ignores C.
  EXPECT_EQ(run_op("Gemm", AttrMap().f("beta", 0), {kA, kB, cases[5].c})[0].to_float_vector(),
            (std::vector<float>{58, 64, 139, 154}));
}

TEST(GemmOp, LargerAgainstNaiveWithThreads) {
  const int64_t m = 7, k = 33, n = 19;
  const auto a = test::random_floats(m * k, 1), b = test::random_floats(n * k, 2),
             c = test::random_floats(n, 3);
  std::vector<float> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += static_cast<double>(a[i * k + kk]) * b[j * k + kk];
      expected[i * n + j] = static_cast<float>(acc + c[j]);
    }
  const std::vector<Tensor> in = {Tensor::from_vector(a, {m, k}), Tensor::from_vector(b, {n, k}),
                                  Tensor::from_vector(c, {n})};
  const Tensor y = run_op("Gemm", AttrMap().i("transB", 1), in, 13, 1, 2)[0];
  test::expect_near_all(y.to_float_vector(), expected, 1e-5f, 1e-5f);
}

TEST(GemmOp, Macs) {
  auto op = test::make_op("Gemm", AttrMap().i("transA", 1));
  const std::vector<ops::TensorType> in = {{DType::kFloat32, {5, 4}}, {DType::kFloat32, {5, 3}}};
  EXPECT_EQ(op->macs(in, {}), 4 * 3 * 5);
}

TEST(GemmOp, Errors) {
  expect_error<ShapeError>(
      [&] {
        run_op("Gemm", AttrMap(), {kA, kA});
      },
      {"Gemm 'test_node': expected B with K = 3 rows"});
  expect_error<ShapeError>(
      [&] {
        run_op("Gemm", AttrMap(), {kA.reshape({1, 2, 3}), kB});
      },
      {"expected A and B of rank 2, but got shapes [1, 2, 3] and [3, 2]"});
  expect_error<ShapeError>(
      [&] {
        run_op("Gemm", AttrMap(), {kA, kB, Tensor::from_vector({1, 2, 3}, {3})});
      },
      {"expected C broadcastable to [M, N] = [2, 2], but got shape [3]"});
  expect_error<ModelError>(
      [&] {
        run_op("Gemm", AttrMap().i("transA", 2), {kA, kB});
      },
      {"'transA' and 'transB' must be 0 or 1"});
}

}  // namespace
}  // namespace tern
