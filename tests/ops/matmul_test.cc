// MatMul op (src/ops/matmul.cc): numpy matmul semantics (1-D operands, batch
// broadcasting) against a naive product, threads, macs and errors.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref_test_util.h"
#include "ops/op_test_util.h"

namespace tern {
namespace {

using test::AttrMap;
using test::expect_error;
using test::run_op;

TEST(MatMulOp, TwoDAndOneDOperands) {
  const Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor y = run_op("MatMul", AttrMap(), {a, b})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{58, 64, 139, 154}));
  const Tensor v = Tensor::from_vector({1, 0, -1}, {3});
  y = run_op("MatMul", AttrMap(), {v, b})[0];  // [3] x [3, 2] -> [2]
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{-4, -4}));
  y = run_op("MatMul", AttrMap(), {a, v})[0];  // [2, 3] x [3] -> [2]
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{-2, -2}));
  y = run_op("MatMul", AttrMap(), {v, v})[0];  // [3] x [3] -> scalar
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{2}));
  y = run_op("MatMul", AttrMap(), {v, Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3, 1})})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 1}));  // [3] x [2, 3, 1] -> [2, 1]
  EXPECT_EQ(y.to_float_vector(), (std::vector<float>{-2, -2}));
}

TEST(MatMulOp, BatchBroadcastAgainstNaive) {
  // [2, 1, 4, 5] x [3, 5, 6] -> [2, 3, 4, 6]
  const Shape as = {2, 1, 4, 5}, bs = {3, 5, 6};
  const auto a = test::random_floats(shape_numel(as), 1),
             b = test::random_floats(shape_numel(bs), 2);
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 6; ++c) {
          double acc = 0;
          for (int k = 0; k < 5; ++k)
            acc += static_cast<double>(a[(i * 4 + r) * 5 + k]) * b[(j * 5 + k) * 6 + c];
          expected.push_back(static_cast<float>(acc));
        }
  for (int threads : {1, 2}) {
    const Tensor y =
        run_op("MatMul", AttrMap(), {Tensor::from_vector(a, as), Tensor::from_vector(b, bs)}, 13, 1,
               threads)[0];
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4, 6}));
    test::expect_near_all(y.to_float_vector(), expected, 1e-5f, 1e-5f);
  }
}

TEST(MatMulOp, Macs) {
  auto op = test::make_op("MatMul", AttrMap());
  const std::vector<ops::TensorType> in = {{DType::kFloat32, {2, 1, 4, 5}},
                                           {DType::kFloat32, {3, 5, 6}}};
  EXPECT_EQ(op->macs(in, {}), 2 * 3 * 4 * 5 * 6);
}

TEST(MatMulOp, Errors) {
  const Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error<ShapeError>(
      [&] {
        run_op("MatMul", AttrMap(), {a, a});
      },
      {"MatMul 'test_node': expected B with 3 rows (the last dim of A [2, 3]), "
       "but got B [2, 3]"});
  expect_error<ShapeError>(
      [&] {
        run_op("MatMul", AttrMap(), {test::iota_tensor({2, 2, 3}), test::iota_tensor({3, 3, 2})});
      },
      {"batch dims of A [2, 2, 3] and B [3, 3, 2] do not broadcast"});
  expect_error<ShapeError>(
      [&] {
        run_op("MatMul", AttrMap(), {Tensor::scalar_f32(1), a});
      },
      {"expected A and B of rank >= 1"});
}

}  // namespace
}  // namespace tern
