// Reshape, Flatten, Squeeze, Unsqueeze: output shapes, views sharing storage, copies of
// non-contiguous inputs, opset differences, errors.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "ops/registry.h"

namespace tern::test {
namespace {

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  const Tensor x = iota_tensor({2, 3, 4});
  const Tensor y = run1("Reshape", {x, i64v({0, -1})});
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  // A view: same storage, same first element.
  EXPECT_EQ(y.storage(), x.storage());
  EXPECT_EQ(y.raw_data(), x.raw_data());
  EXPECT_EQ(run1("Reshape", {x, i64v({4, 0, 2})}).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(run1("Reshape", {x, i64v({-1})}).shape(), (Shape{24}));
  EXPECT_EQ(run1("Reshape", {x, i64v({1, 1, 24, 1})}).shape(), (Shape{1, 1, 24, 1}));
  EXPECT_EQ(run1("Reshape", {Tensor::scalar_f32(3.f), i64v({1, 1})}).shape(), (Shape{1, 1}));
  EXPECT_EQ(run1("Reshape", {f32({3.f}, {1}), i64v({})}).shape(), (Shape{}));
  EXPECT_EQ(run1("Reshape", {x, i64v({6, -1})}).to_float_vector(), x.to_float_vector());
}

TEST(Reshape, AllowZeroFromOpset14) {
  const Tensor empty = Tensor::empty(DType::kFloat32, {0, 3});
  // allowzero = 1: a 0 is a real zero dim.
  EXPECT_EQ(run1("Reshape", {empty, i64v({3, 0})}, AttrMap().i("allowzero", 1), 14).shape(),
            (Shape{3, 0}));
  // allowzero = 0 (and before opset 14): the 0 copies input dim 1 (3).
  EXPECT_EQ(run1("Reshape", {iota_tensor({2, 3}), i64v({-1, 0})}, {}, 14).shape(), (Shape{2, 3}));
  EXPECT_EQ(run1("Reshape", {iota_tensor({2, 3}), i64v({-1, 0})}, AttrMap().i("allowzero", 1), 13)
                .shape(),
            (Shape{2, 3}));  // the attribute does not exist before opset 14
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {empty, i64v({0, -1})}, AttrMap().i("allowzero", 1), 14);
      },
      {"Reshape 'test_node'", "-1"});
}

TEST(Reshape, NonContiguousInputIsCopied) {
  const Tensor x = iota_tensor({3, 4}).transpose(0, 1);  // [4, 3], not contiguous
  const Tensor y = run1("Reshape", {x, i64v({12})});
  EXPECT_EQ(y.to_float_vector(), x.to_float_vector());
  EXPECT_NE(y.storage(), x.storage());
}

TEST(Reshape, Errors) {
  const Tensor x = iota_tensor({2, 3});
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {x, i64v({4})});
      },
      {"Reshape 'test_node'", "[2, 3]", "6 elements", "[4]", "4 elements"});
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {x, i64v({-1, -1})});
      },
      {"Reshape 'test_node'", "more than one -1"});
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {x, i64v({4, -1})});
      },
      {"Reshape 'test_node'", "cannot be inferred"});
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {x, i64v({-2, 3})});
      },
      {"Reshape 'test_node'", "-2"});
  expect_error<ShapeError>(
      [&] {
        run1("Reshape", {x, i64v({1, 1, 0})});
      },
      {"Reshape 'test_node'", "index 2", "rank 2"});
  expect_error<UnsupportedOpError>(
      [&] {
        run1("Reshape", {x, f32({6}, {1})});
      },
      {"Reshape 'test_node'", "shape", "float32"});
}

TEST(Reshape, InferNeedsTheShapeValue) {
  // At plan time the shape input may be unknown: infer() asks for it.
  const ops::OpSchema* schema = ops::OpRegistry::global().find("Reshape");
  ASSERT_NE(schema, nullptr);
  AttrMap attrs;
  ops::Attrs reader(attrs.attrs, "Reshape 'r'");
  auto op = schema->create(reader, ops::OpContext{"r", "Reshape", 13});
  EXPECT_TRUE(op->returns_view());
  std::vector<ops::InferInput> in(2);
  in[0] = ops::InferInput{true, DType::kFloat32, {2, 3}, nullptr};
  in[1] = ops::InferInput{true, DType::kInt64, {2}, nullptr};
  try {
    op->infer(in);
    ADD_FAILURE() << "expected ValueNotKnown";
  } catch (const ops::ValueNotKnown& e) {
    EXPECT_EQ(e.input_index, 1);
  }
}

TEST(Flatten, AxisIncludingNegativeAndEnds) {
  const Tensor x = iota_tensor({2, 3, 4, 5});
  EXPECT_EQ(run1("Flatten", {x}).shape(), (Shape{2, 60}));
  EXPECT_EQ(run1("Flatten", {x}, AttrMap().i("axis", 0)).shape(), (Shape{1, 120}));
  EXPECT_EQ(run1("Flatten", {x}, AttrMap().i("axis", 4)).shape(), (Shape{120, 1}));
  EXPECT_EQ(run1("Flatten", {x}, AttrMap().i("axis", -1)).shape(), (Shape{24, 5}));
  EXPECT_EQ(run1("Flatten", {x}, AttrMap().i("axis", -4)).shape(), (Shape{1, 120}));
  const Tensor y = run1("Flatten", {x}, AttrMap().i("axis", 2));
  EXPECT_EQ(y.shape(), (Shape{6, 20}));
  EXPECT_EQ(y.raw_data(), x.raw_data());
  expect_error<ShapeError>([&] { run1("Flatten", {x}, AttrMap().i("axis", 5)); },
                           {"Flatten 'test_node'", "axis 5", "rank-4", "-4..4"});
  expect_error<ShapeError>([&] { run1("Flatten", {x}, AttrMap().i("axis", -5)); },
                           {"Flatten 'test_node'", "axis -5"});
}

TEST(Squeeze, AttributeBefore13InputFrom13) {
  const Tensor x = iota_tensor({1, 3, 1, 2});
  // Opset 11: axes attribute.
  const Tensor a = run1("Squeeze", {x}, AttrMap().ints("axes", {0}), 11);
  EXPECT_EQ(a.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(a.raw_data(), x.raw_data());
  EXPECT_EQ(run1("Squeeze", {x}, AttrMap().ints("axes", {-2, 0}), 11).shape(), (Shape{3, 2}));
  // No axes: every size-1 dim goes.
  EXPECT_EQ(run1("Squeeze", {x}, {}, 11).shape(), (Shape{3, 2}));
  EXPECT_EQ(run1("Squeeze", {x}, {}, 13).shape(), (Shape{3, 2}));
  // Opset 13: axes input.
  EXPECT_EQ(run1("Squeeze", {x, i64v({2})}, {}, 13).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run1("Squeeze", {x, i64v({-4})}, {}, 13).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(run1("Squeeze", {f32({5.f}, {1, 1})}, {}, 13).shape(), (Shape{}));
  EXPECT_EQ(run1("Squeeze", {x, i64v({})}, {}, 13).shape(), (Shape{3, 2}));
  expect_error<ShapeError>(
      [&] {
        run1("Squeeze", {x, i64v({1})}, {}, 13);
      },
      {"Squeeze 'test_node'", "axis 1", "expected size 1", "3"});
  expect_error<ShapeError>(
      [&] {
        run1("Squeeze", {x, i64v({4})}, {}, 13);
      },
      {"Squeeze 'test_node'", "out of range"});
  expect_error<ShapeError>(
      [&] {
        run1("Squeeze", {x, i64v({0, -4})}, {}, 13);
      },
      {"Squeeze 'test_node'", "twice"});
}

TEST(Unsqueeze, AxesIndexTheOutput) {
  const Tensor x = iota_tensor({3, 4});
  EXPECT_EQ(run1("Unsqueeze", {x}, AttrMap().ints("axes", {0}), 11).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(run1("Unsqueeze", {x}, AttrMap().ints("axes", {0, 3}), 9).shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(run1("Unsqueeze", {x, i64v({1, -1})}, {}, 13).shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(run1("Unsqueeze", {x, i64v({-1, 1})}, {}, 13).shape(), (Shape{3, 1, 4, 1}));
  // Scalar -> [1] (the PyTorch shape-export pattern), int64 data kept exact.
  const Tensor s = run1("Unsqueeze", {Tensor::scalar_i64(int64_t{1} << 60), i64v({0})}, {}, 13);
  EXPECT_EQ(s.shape(), (Shape{1}));
  EXPECT_EQ(s.to_int64_vector(), (std::vector<int64_t>{int64_t{1} << 60}));
  const Tensor v = run1("Unsqueeze", {x, i64v({2})}, {}, 13);
  EXPECT_EQ(v.raw_data(), x.raw_data());
  expect_error<ShapeError>(
      [&] {
        run1("Unsqueeze", {x, i64v({3})}, {}, 13);
      },
      {"Unsqueeze 'test_node'", "axis 3", "rank-3"});
  expect_error<ShapeError>(
      [&] {
        run1("Unsqueeze", {x, i64v({0, 0})}, {}, 13);
      },
      {"Unsqueeze 'test_node'", "twice"});
  expect_error<ModelError>([&] { run1("Unsqueeze", {x}, {}, 11); },
                           {"Unsqueeze 'test_node'", "axes"});
}

TEST(ReshapeOps, EveryDtypeIsAView) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kUint8, DType::kInt32,
                  DType::kInt64, DType::kBool}) {
    const Tensor x = Tensor::zeros(t, {2, 1, 3});
    for (const Tensor& y : {run1("Reshape", {x, i64v({3, 2})}), run1("Flatten", {x}),
                            run1("Squeeze", {x, i64v({1})}), run1("Unsqueeze", {x, i64v({0})})}) {
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.raw_data(), x.raw_data()) << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace tern::test
